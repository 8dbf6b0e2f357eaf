package receiver

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"switchboard/engine/stdwebhook"
)

func TestReceiverLogsLagInMilliseconds(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	written := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	var logs bytes.Buffer
	rc := New(Options{Key: key, Logger: slog.New(slog.NewJSONHandler(&logs, nil)),
		Now: func() time.Time { return written.Add(1234567 * time.Microsecond) }})
	body := []byte(`{"id":"evt_1","type":"message.status","timestamp":"2026-03-02T09:00:00Z","data":{}}`)
	ts, sig := stdwebhook.Sign(key, "evt_1", written, body)
	req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
	req.Header.Set(stdwebhook.HeaderID, "evt_1")
	req.Header.Set(stdwebhook.HeaderTimestamp, ts)
	req.Header.Set(stdwebhook.HeaderSignature, sig)
	w := httptest.NewRecorder()
	rc.ServeHTTP(w, req)
	if w.Code != http.StatusNoContent {
		t.Fatalf("status %d", w.Code)
	}
	var line map[string]any
	if err := json.Unmarshal([]byte(strings.TrimSpace(logs.String())), &line); err != nil {
		t.Fatalf("log %q: %v", logs.String(), err)
	}
	if line["lagMs"] != 1234.6 || line["lag"] != nil {
		t.Fatalf("log line %v: want lagMs 1234.6 (milliseconds, to a tenth)", line)
	}
}
