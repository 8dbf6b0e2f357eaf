package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"switchboard/engine"
	"switchboard/store"
)

// opsFixture is an in-process stack on a copy of the quickstart (its store open and migrated,
// as a running serve holds it) and the runtime file with which the binary works on the same
// SQLite database. Messages are put in their states through the store itself, the way the
// dispatcher would, at the fake clock's time.
type opsFixture struct {
	t   *testing.T
	e   *apiEnv
	rt  string
	st  *store.Store
	ctx context.Context
	n   int
}

func newOpsFixture(t *testing.T) *opsFixture {
	t.Helper()
	e := newAPIEnv(t, envOptions{})
	return &opsFixture{t: t, e: e, rt: e.stack.rt.Path, st: e.stack.store, ctx: context.Background()}
}

// cancel cancels message id through the engine's cancel, the one the API's route calls, as an
// operator with the pseudonym caller:test.
func (f *opsFixture) cancel(id string) {
	f.t.Helper()
	op, err := engine.NewOperator(engine.OperatorConfig{Store: f.st, Clock: f.e.clock})
	if err != nil {
		f.t.Fatal(err)
	}
	m, err := f.st.Message(f.ctx, id)
	if err == nil {
		_, err = op.Cancel(f.ctx, m, engine.Caller{Pseudonym: "caller:test", Role: "operator"})
	}
	if err != nil {
		f.t.Fatalf("cancel %s: %v", id, err)
	}
}

// run runs the binary on the fixture's runtime file.
func (f *opsFixture) run(args ...string) (string, string, int) {
	f.t.Helper()
	return cli(f.t, append([]string{"--config", f.rt}, args...)...)
}

// runRSS runs the binary and also returns its peak resident set size in bytes. The garbage
// collector runs at GOGC=20 so that the peak follows the live heap closely: what is compared is
// what the command holds, not when the collector happened to run.
//
// The binary is started by a fresh copy of the test binary (launchForRSS), not by this process:
// on Linux a child's peak RSS counts the memory of the process that started it (the child
// shares its parent's address space until it executes), and this test process, running the
// package's tests in parallel under the race detector, can hold far more than the command (842
// MiB in one CI run, which then measured as the peak of both commands compared).
func (f *opsFixture) runRSS(args ...string) (string, string, int, int64) {
	f.t.Helper()
	var out, errb bytes.Buffer
	report := filepath.Join(f.t.TempDir(), "rss")
	cmd := exec.Command(os.Args[0], append([]string{binary, "--config", f.rt}, args...)...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.Env = append(os.Environ(), "SWITCHBOARD_CONFIG=", "GOGC=20", rssLauncherEnv+"="+report)
	err := cmd.Run()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		f.t.Fatalf("run %v: %v", args, err)
	}
	b, err := os.ReadFile(report)
	if err != nil {
		f.t.Fatalf("run %v: the launcher reported no peak RSS: %v", args, err)
	}
	kb, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		f.t.Fatalf("run %v: peak RSS %q: %v", args, b, err)
	}
	return out.String(), errb.String(), cmd.ProcessState.ExitCode(), kb * 1024 // kilobytes on Linux
}

// rssLauncherEnv, set to a file's path, makes the test binary a launcher (see runRSS).
const rssLauncherEnv = "SWITCHBOARD_TEST_RSS_REPORT"

// launchForRSS runs args[0] with the rest of args and this process's standard streams and
// environment (less rssLauncherEnv), writes the child's peak RSS in kilobytes to report, and
// returns the child's exit code.
func launchForRSS(report string, args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "launcher: no command")
		return 2
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, rssLauncherEnv+"=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	err := cmd.Run()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		fmt.Fprintln(os.Stderr, "launcher:", err)
		return 2
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		fmt.Fprintln(os.Stderr, "launcher: no resource usage")
		return 2
	}
	if err := os.WriteFile(report, []byte(strconv.FormatInt(ru.Maxrss, 10)), 0o600); err != nil {
		fmt.Fprintln(os.Stderr, "launcher:", err)
		return 2
	}
	return cmd.ProcessState.ExitCode()
}

// seed accepts n SMS messages at the clock's time, in batches, and returns their ids.
func (f *opsFixture) seed(n int) []string {
	f.t.Helper()
	ids := make([]string, 0, n)
	now := f.e.clock.Now()
	for len(ids) < n {
		batch := make([]engine.Acceptance, 0, min(500, n-len(ids)))
		for len(ids)+len(batch) < n && len(batch) < 500 {
			f.n++
			id := fmt.Sprintf("0190f5a0-%04x-7000-8000-%012d", f.n>>16, f.n)
			batch = append(batch, engine.Acceptance{
				Idempotency: engine.IdempotencyRecord{Issuer: "https://issuer.test", Subject: "case-system",
					Key: "key-" + id, RequestHash: []byte("hash-" + id), Response: []byte(`{"id":"` + id + `"}`),
					ExpiresAt: now.Add(7 * 24 * time.Hour)},
				Message: engine.Message{ID: id, Channel: engine.ChannelSMS, SenderProfile: "reminders-sms",
					Provider: "sms-gateway", RecipientKind: "phone", AccessProfile: "case-notices", Caller: "caller:test",
					AcceptedAt: now, ExpiresAt: now.Add(24 * time.Hour)},
				Payload: engine.Payload{Recipient: testPhone, Parts: map[string]string{"text": "Riverside Clinic, tomorrow"}},
				Audit:   engine.AuditEntry{Event: "message.accepted", Actor: "caller:test"},
			})
		}
		for i, r := range f.st.Accept(f.ctx, batch) {
			if r.Err != nil {
				f.t.Fatalf("accept %s: %v", batch[i].Message.ID, r.Err)
			}
			ids = append(ids, r.MessageID)
		}
	}
	return ids
}

// finishAll claims every due message and finishes it with outcome, moving it to d.
func (f *opsFixture) finishAll(outcome engine.AttemptOutcome, d engine.Dispatch) {
	f.t.Helper()
	now := f.e.clock.Now()
	for {
		p, err := f.st.ClaimPage(f.ctx, now, engine.PageLimits{MaxEntries: 500, MaxBytes: 1 << 30}, time.Minute)
		if err != nil {
			f.t.Fatal(err)
		}
		if len(p.Claims) == 0 {
			return
		}
		for _, c := range p.Claims {
			ref, code := "", "gateway."+string(outcome)
			reason := engine.Reason{Code: code, By: engine.ReasonByProvider} // as the dispatcher decides it
			if outcome == engine.AttemptAccepted {
				ref, code, reason = "ref-"+c.Message.ID, "", engine.Reason{}
			}
			if err := f.st.Finish(f.ctx, engine.Finish{Lease: c.Lease, Attempt: outcome, Code: code, Reason: reason,
				Dispatch: d, Report: engine.ReportNone, Provider: c.Message.Provider, ProviderRef: ref,
				ProviderAttempts: 1, FinishedAt: now,
				Audit: engine.AuditEntry{Event: "attempt.finished", Actor: "worker", MessageID: c.Message.ID, Outcome: string(outcome)}}); err != nil {
				f.t.Fatal(err)
			}
		}
	}
}

// inState seeds n messages and brings them to d (queued, failed, unknown or submitted).
func (f *opsFixture) inState(n int, d engine.Dispatch) []string {
	f.t.Helper()
	ids := f.seed(n)
	switch d {
	case engine.DispatchQueued:
	case engine.DispatchFailed:
		f.finishAll(engine.AttemptPermanent, d)
	case engine.DispatchUnknown:
		f.finishAll(engine.AttemptMaybeSent, d)
	case engine.DispatchSubmitted:
		f.finishAll(engine.AttemptAccepted, d)
	default:
		f.t.Fatalf("inState %s", d)
	}
	return ids
}

func (f *opsFixture) message(id string) *engine.Message {
	f.t.Helper()
	m, err := f.st.Message(f.ctx, id)
	if err != nil {
		f.t.Fatalf("Message(%s): %v", id, err)
	}
	return m
}

func (f *opsFixture) count(q engine.MessageQuery) int64 {
	f.t.Helper()
	n, err := f.st.CountMessages(f.ctx, q)
	if err != nil {
		f.t.Fatal(err)
	}
	return n
}

// journal is the number of verified records; it fails the test if the journal is broken.
func (f *opsFixture) journal() int64 {
	f.t.Helper()
	rep, err := f.st.VerifyAudit(f.ctx)
	if err != nil || !rep.OK() {
		f.t.Fatalf("VerifyAudit = %+v, %v", rep, err)
	}
	return rep.Records
}

// raw opens the database file behind the store's back, for tampering.
func (f *opsFixture) raw() *sql.DB {
	f.t.Helper()
	db, err := sql.Open("sqlite3", "file:"+f.e.stack.rt.Database.Path+"?_busy_timeout=5000")
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { _ = db.Close() })
	return db
}

// jsonOut decodes one JSON object printed on stdout.
func jsonOut(t *testing.T, out string) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &v); err != nil {
		t.Fatalf("output %q is not one JSON object: %v", out, err)
	}
	return v
}
