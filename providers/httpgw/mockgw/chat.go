package mockgw

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Bounds of the chat history the gateway keeps, so that a long dev session stays small.
const (
	chatHistoryPerChannel = 100
	chatHistoryChannels   = 1024
)

// ChatMessage is one message the chat endpoint took, as conversations.history lists it.
type ChatMessage struct {
	Channel  string          `json:"channel"`
	TS       string          `json:"ts"`
	Text     string          `json:"text"`
	Username string          `json:"username,omitempty"`
	Blocks   json.RawMessage `json:"blocks,omitempty"`
}

// chatPost is the body of chat.postMessage.
type chatPost struct {
	Channel  string          `json:"channel"`
	Text     string          `json:"text"`
	Username string          `json:"username"`
	Blocks   json.RawMessage `json:"blocks"`
}

// serveChatPost handles POST …/chat.postMessage as a Slack-like API does: 200 with
// {"ok": true, "channel", "ts"}, or 200 with {"ok": false, "error"} for a request it refuses
// (Slack answers its errors with 200). The channel "C-NOT-FOUND" is refused with
// channel_not_found, so that a dev can see a permanent failure. FailTransient applies (429
// ratelimited with Retry-After: 1).
func (g *Gateway) serveChatPost(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	g.stats.ChatRequests++
	roll := g.rng.Float64()
	g.mu.Unlock()
	if roll < g.opts.FailTransient {
		w.Header().Set("Retry-After", "1")
		writeJSON(w, http.StatusTooManyRequests, map[string]any{"ok": false, "error": "ratelimited"})
		return
	}
	var post chatPost
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err == nil {
		err = json.Unmarshal(body, &post)
	}
	switch {
	case err != nil:
		writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "invalid_json"})
		return
	case post.Channel == "" || utf8.RuneCountInString(post.Channel) > 256:
		writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "channel_not_found"})
		return
	case post.Channel == "C-NOT-FOUND":
		writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "channel_not_found"})
		return
	case strings.TrimSpace(post.Text) == "" && len(post.Blocks) == 0:
		writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "no_text"})
		return
	}
	g.mu.Lock()
	g.chatSeq++
	ts := strconv.FormatInt(time.Now().Unix(), 10) + "." + leftPad(g.chatSeq)
	msg := ChatMessage{Channel: post.Channel, TS: ts, Text: post.Text, Username: post.Username, Blocks: post.Blocks}
	history, known := g.chats[post.Channel]
	if known || len(g.chats) < chatHistoryChannels {
		if len(history) >= chatHistoryPerChannel {
			history = history[1:]
		}
		g.chats[post.Channel] = append(history, msg)
	}
	g.stats.ChatMessages++
	g.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "channel": post.Channel, "ts": ts})
}

// serveChatHistory handles GET …/conversations.history?channel=C: the messages the chat
// endpoint took for that channel, newest first, as {"ok": true, "messages": [...]}.
func (g *Gateway) serveChatHistory(w http.ResponseWriter, r *http.Request) {
	channel := r.URL.Query().Get("channel")
	msgs := g.ChatHistory(channel)
	out := make([]ChatMessage, 0, len(msgs))
	for i := len(msgs) - 1; i >= 0; i-- {
		out = append(out, msgs[i])
	}
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "messages": out})
}

// ChatHistory returns the messages the chat endpoint took for a channel, oldest first (at most
// the last 100).
func (g *Gateway) ChatHistory(channel string) []ChatMessage {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]ChatMessage(nil), g.chats[channel]...)
}

// leftPad writes n as six digits, as Slack's ts fraction reads.
func leftPad(n int) string {
	s := strconv.Itoa(n % 1000000)
	return strings.Repeat("0", 6-len(s)) + s
}
