package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"switchboard/engine"
)

const (
	inboxSender   = "12D3KooWCompanionCompanionCompanionCompanion"
	inboxProtocol = "/switchboard/1.0.0/message"
)

// inboxEntryJSON is one entry of GET /v1/inbox, decoded exactly (tsMs is a uint64).
type inboxEntryJSON struct {
	ID            string    `json:"id"`
	From          string    `json:"from"`
	Protocol      string    `json:"protocol"`
	MessageID     string    `json:"messageId"`
	TsMs          uint64    `json:"tsMs"`
	ReceivedAt    time.Time `json:"receivedAt"`
	PayloadBytes  int       `json:"payloadBytes"`
	Payload       *string   `json:"payload"`
	PayloadBase64 string    `json:"payloadBase64"`
	PayloadErased bool      `json:"payloadErased"`
}

// inboxPageJSON is the answer of GET /v1/inbox.
type inboxPageJSON struct {
	Entries []inboxEntryJSON `json:"entries"`
	Next    string           `json:"next"`
}

// putInboxEntry stores one received envelope as the peer provider does: a fresh UUIDv7 inbox
// id and the acknowledgement that names it.
func putInboxEntry(t *testing.T, in engine.Inbox, msgID string, payload []byte, tsMs uint64, at time.Time) engine.InboxEntry {
	t.Helper()
	id, err := uuid.NewV7()
	if err != nil {
		t.Fatal(err)
	}
	e := engine.InboxEntry{ID: id.String(), From: inboxSender, Protocol: inboxProtocol, MessageID: msgID,
		TsMs: tsMs, ReceivedAt: at, Payload: payload,
		Response: []byte(`{"accepted":true,"inboxId":"` + id.String() + `"}`)}
	res, err := in.PutInbox(context.Background(), e)
	if err != nil || res.Duplicate || res.InboxID != e.ID {
		t.Fatalf("PutInbox(%s) = %+v, %v", msgID, res, err)
	}
	e.ReceivedAt = at.Truncate(time.Millisecond)
	return e
}

// addInboxSchema compiles the OpenAPI document's Inbox schema into o.
func addInboxSchema(t *testing.T, o *openAPI, doc []byte) {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource("mem:///openapi.json", v); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("mem:///openapi.json#/components/schemas/Inbox")
	if err != nil {
		t.Fatalf("compile Inbox: %v", err)
	}
	o.schemas["Inbox"] = s
}

// readInbox reads one page as token and checks it against the OpenAPI schema.
func readInbox(t *testing.T, e *apiEnv, o *openAPI, token, query string) inboxPageJSON {
	t.Helper()
	a := e.do(request{method: "GET", path: "/v1/inbox" + query, token: token})
	if a.status != 200 {
		t.Fatalf("GET /v1/inbox%s: %d %s", query, a.status, a.raw)
	}
	if a.header.Get("Cache-Control") != "no-store" || a.header.Get("Content-Type") != "application/json" {
		t.Fatalf("GET /v1/inbox%s: headers %v", query, a.header)
	}
	o.check(t, "Inbox", a.raw)
	var p inboxPageJSON
	if err := json.Unmarshal(a.raw, &p); err != nil {
		t.Fatalf("decode %s: %v", a.raw, err)
	}
	return p
}

func pageIDsOf(p inboxPageJSON) []string {
	ids := make([]string, len(p.Entries))
	for i, e := range p.Entries {
		ids[i] = e.ID
	}
	return ids
}

func TestInboxOverAPI(t *testing.T) {
	t.Parallel()
	e := newAPIEnv(t, envOptions{})
	doc := e.do(request{method: "GET", path: "/openapi.json"}).raw
	o := loadOpenAPI(t, doc)
	addInboxSchema(t, o, doc)
	receiver, operator := e.token("inbox-reader"), e.token("operations-console")

	if p := readInbox(t, e, o, receiver, ""); len(p.Entries) != 0 || p.Next != "" {
		t.Fatalf("empty inbox: %+v", p)
	}
	at := e.clock.Now()
	stored := []engine.InboxEntry{
		putInboxEntry(t, e.stack.store, "m-text", []byte("Grüße: case 7 moved"), 1_700_000_000_123, at),
		putInboxEntry(t, e.stack.store, "m-binary", []byte{0xff, 0xfe, 0, 1}, math.MaxUint64, at.Add(time.Second)),
		putInboxEntry(t, e.stack.store, "m-empty", []byte{}, 0, at.Add(2*time.Second)),
		putInboxEntry(t, e.stack.store, "m-4", []byte(`{"k":"v"}`), 4, at.Add(3*time.Second)),
		putInboxEntry(t, e.stack.store, "m-5", []byte("five"), 5, at.Add(4*time.Second)),
	}

	// Paging: next continues, and an empty page keeps the reader's place.
	var got []inboxEntryJSON
	after := ""
	for _, want := range [][]int{{0, 1}, {2, 3}, {4}, {}} {
		p := readInbox(t, e, o, receiver, "?limit=2&after="+after)
		if len(p.Entries) != len(want) {
			t.Fatalf("after %q: %v, want %d entries", after, pageIDsOf(p), len(want))
		}
		for i, w := range want {
			if p.Entries[i].ID != stored[w].ID {
				t.Fatalf("after %q: entry %d is %s, want %s", after, i, p.Entries[i].ID, stored[w].ID)
			}
		}
		wantNext := stored[4].ID
		if len(want) > 0 {
			wantNext = stored[want[len(want)-1]].ID
		}
		if p.Next != wantNext {
			t.Fatalf("after %q: next %q, want %q", after, p.Next, wantNext)
		}
		got = append(got, p.Entries...)
		after = p.Next
	}
	for i, g := range got {
		w := stored[i]
		if g.From != w.From || g.Protocol != w.Protocol || g.MessageID != w.MessageID || g.TsMs != w.TsMs ||
			!g.ReceivedAt.Equal(w.ReceivedAt) || g.PayloadBytes != len(w.Payload) || g.PayloadErased {
			t.Fatalf("entry %d = %+v, want %+v", i, g, w)
		}
		raw, err := base64.StdEncoding.DecodeString(g.PayloadBase64)
		if err != nil || !bytes.Equal(raw, w.Payload) {
			t.Fatalf("entry %d: payloadBase64 %q decodes to %q, want %q", i, g.PayloadBase64, raw, w.Payload)
		}
	}
	if got[0].Payload == nil || *got[0].Payload != "Grüße: case 7 moved" {
		t.Fatalf("text payload: %v", got[0].Payload)
	}
	if got[1].Payload != nil {
		t.Fatalf("a payload that is not UTF-8 came as text %q", *got[1].Payload)
	}
	if got[2].Payload == nil || *got[2].Payload != "" {
		t.Fatalf("an empty payload should read as empty text, got %v", got[2].Payload)
	}

	// The operator reads the inbox too; the cursor is case-insensitive; the default page holds all.
	if p := readInbox(t, e, o, operator, "?after="+strings.ToUpper(stored[2].ID)); len(p.Entries) != 2 || p.Entries[0].ID != stored[3].ID {
		t.Fatalf("operator after an upper-case cursor: %v", pageIDsOf(p))
	}
	if p := readInbox(t, e, o, receiver, ""); len(p.Entries) != 5 || p.Next != stored[4].ID {
		t.Fatalf("default page: %v next %q", pageIDsOf(p), p.Next)
	}

	// Retention erases a payload (as its sweep does, in SQL): the entry stays, marked erased.
	db, err := sqlx.Open("sqlite3", "file:"+e.stack.rt.Database.Path+"?_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`UPDATE peer_inbox SET payload = NULL, payload_erased_at = ? WHERE id = ?`,
		at.UnixMilli(), stored[0].ID); err != nil {
		t.Fatal(err)
	}
	p := readInbox(t, e, o, receiver, "?limit=1")
	if er := p.Entries[0]; !er.PayloadErased || er.Payload != nil || er.PayloadBase64 != "" || er.PayloadBytes != 0 || er.MessageID != "m-text" {
		t.Fatalf("erased entry: %+v", er)
	}
}

func TestInboxAPIRefusals(t *testing.T) {
	t.Parallel()
	e := newAPIEnv(t, envOptions{})
	o := loadOpenAPI(t, e.do(request{method: "GET", path: "/openapi.json"}).raw)
	receiver := e.token("inbox-reader")
	for _, c := range []struct {
		name   string
		req    request
		status int
		code   string
	}{
		{"sender may not read the inbox", request{method: "GET", path: "/v1/inbox", token: e.token("case-system")}, 403, "operation.not-authorized"},
		{"no token", request{method: "GET", path: "/v1/inbox"}, 401, "authentication.refused"},
		{"limit zero", request{method: "GET", path: "/v1/inbox?limit=0", token: receiver}, 400, "request.invalid"},
		{"limit over 1000", request{method: "GET", path: "/v1/inbox?limit=1001", token: receiver}, 400, "request.invalid"},
		{"limit not a number", request{method: "GET", path: "/v1/inbox?limit=ten", token: receiver}, 400, "request.invalid"},
		{"empty limit", request{method: "GET", path: "/v1/inbox?limit=", token: receiver}, 400, "request.invalid"},
		{"cursor not an inbox id", request{method: "GET", path: "/v1/inbox?after=yesterday", token: receiver}, 400, "request.invalid"},
		{"repeated parameter", request{method: "GET", path: "/v1/inbox?limit=1&limit=2", token: receiver}, 400, "request.invalid"},
		{"unknown parameter", request{method: "GET", path: "/v1/inbox?from=someone", token: receiver}, 400, "request.invalid"},
		{"POST", request{method: "POST", path: "/v1/inbox", token: receiver, body: map[string]any{}}, 405, "request.method-not-allowed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := e.do(c.req)
			assertProblem(t, o, a, c.status, c.code)
			if strings.Contains(string(a.raw), "yesterday") || strings.Contains(string(a.raw), "someone") {
				t.Fatalf("the problem echoes a query value: %s", a.raw)
			}
		})
	}
	if a := e.do(request{method: "GET", path: "/v1/inbox?limit=1000", token: receiver}); a.status != 200 {
		t.Fatalf("limit 1000: %d %s", a.status, a.raw)
	}
}
