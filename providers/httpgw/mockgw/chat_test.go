package mockgw

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// postChat posts one chat.postMessage body to the gateway and decodes the answer.
func postChat(t *testing.T, base, body string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Post(base+"api/chat.postMessage", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, out
}

func TestChatPostAndHistory(t *testing.T) {
	t.Parallel()
	g := New(Options{})
	t.Cleanup(func() { _ = g.Close() })
	base, err := g.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	status, out := postChat(t, base, `{"channel": "C0123ABCD", "text": "first", "username": "Switchboard"}`)
	if status != 200 || out["ok"] != true || out["channel"] != "C0123ABCD" || out["ts"] == "" {
		t.Fatalf("post: %d %v", status, out)
	}
	_, out = postChat(t, base, `{"channel": "C0123ABCD", "text": "second", "blocks": [{"type": "divider"}]}`)
	second := out["ts"].(string)
	for body, want := range map[string]string{
		`{"channel": "C-NOT-FOUND", "text": "x"}`: "channel_not_found",
		`{"channel": "", "text": "x"}`:            "channel_not_found",
		`{"channel": "C1", "text": " "}`:          "no_text",
		`not json`:                                "invalid_json",
	} {
		if status, out := postChat(t, base, body); status != 200 || out["ok"] != false || out["error"] != want {
			t.Errorf("%s: %d %v, want error %s", body, status, out, want)
		}
	}
	resp, err := http.Get(base + "api/conversations.history?channel=C0123ABCD")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var hist struct {
		OK       bool          `json:"ok"`
		Messages []ChatMessage `json:"messages"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&hist); err != nil {
		t.Fatal(err)
	}
	if !hist.OK || len(hist.Messages) != 2 || hist.Messages[0].TS != second || hist.Messages[0].Text != "second" ||
		string(hist.Messages[0].Blocks) != `[{"type":"divider"}]` || hist.Messages[1].Username != "Switchboard" {
		t.Fatalf("history = %+v", hist)
	}
	if s := g.Stats(); s.ChatRequests != 6 || s.ChatMessages != 2 || s.Requests != 0 {
		t.Errorf("stats = %+v", s)
	}
}

func TestChatHistoryIsBounded(t *testing.T) {
	t.Parallel()
	g := New(Options{})
	t.Cleanup(func() { _ = g.Close() })
	base, err := g.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	for range chatHistoryPerChannel + 5 {
		postChat(t, base, `{"channel": "C1", "text": "x"}`)
	}
	if n := len(g.ChatHistory("C1")); n != chatHistoryPerChannel {
		t.Fatalf("history holds %d messages, want %d", n, chatHistoryPerChannel)
	}
}
