package api

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"switchboard/engine"
	"switchboard/engine/auth"
	"switchboard/engine/cputime"
	"switchboard/engine/enginetest"
	"switchboard/packages"
)

// acceptingStore answers every acceptance at once, so that a benchmark sees the API and the
// engine without the database. Every other method is left unimplemented.
type acceptingStore struct{ engine.Store }

func (acceptingStore) Accept(_ context.Context, batch []engine.Acceptance) []engine.AcceptResult {
	out := make([]engine.AcceptResult, len(batch))
	for i, a := range batch {
		out[i] = engine.AcceptResult{MessageID: a.Message.ID, Response: a.Idempotency.Response}
	}
	return out
}

// BenchmarkSubmitHandler measures POST /v1/messages inside the process, from the root handler
// to the 202 answer: middleware, a cached token check, the access profile and rate limit,
// decoding, the request hash, schema validation, rendering and the acceptance, against a store
// that answers at once (BenchmarkAcceptPath in cmd/switchboard adds HTTP and SQLite). Run with:
//
//	go test -run '^$' -bench BenchmarkSubmitHandler -cpu 1 ./engine/api/
func BenchmarkSubmitHandler(b *testing.B) {
	pkg, err := packages.Load(filepath.Join("..", "..", "examples", "quickstart"))
	if err != nil {
		b.Fatal(err)
	}
	clock := enginetest.NewFakeClock(time.Now())
	issuer, err := auth.NewDevIssuer("https://issuer.test", "switchboard")
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	jwks := filepath.Join(dir, "jwks.json")
	if err := issuer.WriteFiles(filepath.Join(dir, "key.pem"), jwks); err != nil {
		b.Fatal(err)
	}
	const client = "case-system"
	verifier, err := auth.NewVerifier(auth.Config{Issuer: issuer.Issuer(), Audience: issuer.Audience(),
		JWKSFile: jwks, AllowedClients: []string{client}}, clock)
	if err != nil {
		b.Fatal(err)
	}
	token, err := issuer.Mint(client, pkg.ProfileForClient(client).RequiredScopes, time.Hour, clock.Now())
	if err != nil {
		b.Fatal(err)
	}
	store := acceptingStore{}
	srv := New(Config{
		Package: pkg, Store: store, Auth: verifier, Limiter: auth.NewLimiter(clock), Clock: clock,
		PseudonymKey: []byte("benchmark pseudonym key"), Logger: slog.New(slog.DiscardHandler),
		Submitter: engine.NewSubmitter(engine.SubmitterConfig{Package: pkg, Store: store, Clock: clock,
			ReceiptWindow: 24 * time.Hour}),
	})
	h := srv.Handler()
	body := []byte(`{"data":{"clinicName":"Riverside Clinic","date":"2026-10-01","time":"09:30"},"locale":"en",` +
		`"senderProfile":"reminders-sms","template":{"id":"appointment-reminder-sms","version":"1"},"to":{"phone":"+15550100123"}}`)
	b.ReportAllocs()
	cpuStart := processCPU(b)
	for i := 0; b.Loop(); i++ {
		if i%20 == 0 {
			clock.Advance(time.Millisecond) // refill the caller's bucket as real time would
		}
		req := httptest.NewRequest(http.MethodPost, "/v1/messages", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Idempotency-Key", "bench-"+strconv.Itoa(i))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusAccepted {
			b.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
	}
	b.ReportMetric(float64((processCPU(b)-cpuStart).Microseconds())/float64(b.N), "cpu-µs/op")
}

// processCPU is the user and system CPU time the process has used so far: on a shared machine
// it moves much less than wall-clock time with what else runs.
func processCPU(b *testing.B) time.Duration {
	d, ok := cputime.Process()
	if !ok {
		b.Fatal("the process's CPU time cannot be read here")
	}
	return d
}
