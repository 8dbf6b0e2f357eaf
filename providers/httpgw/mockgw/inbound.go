package mockgw

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"time"
)

// inboundRequest is the body of POST /inbound: an SMS "sent to" the gateway's number, which the
// gateway passes on to the callback URL as an inbound message.
type inboundRequest struct {
	From string `json:"from"`
	To   string `json:"to"`
	Text string `json:"text"`
}

// inboundMessage is what the gateway posts to the callback URL for it, signed like a report.
type inboundMessage struct {
	Type       string `json:"type"` // "inbound"
	ID         string `json:"id"`
	From       string `json:"from"`
	To         string `json:"to"`
	Text       string `json:"text"`
	ReceivedAt string `json:"receivedAt"`
}

// serveInbound handles POST /inbound {from, text, to?}: it posts the signed inbound message to
// the callback URL at once (retrying 429 and 5xx as reports are) and answers 200 with
// {"id", "callbackStatus"}, or 502 when the callback was not taken. `switchboard dev` uses it
// to simulate a reply SMS.
func (g *Gateway) serveInbound(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"error": "method not allowed"})
		return
	}
	var in inboundRequest
	dec := json.NewDecoder(io.LimitReader(r.Body, 1<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil || strings.TrimSpace(in.From) == "" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "want {\"from\": \"+…\", \"text\": \"…\"}"})
		return
	}
	if g.opts.CallbackURL == "" {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": "this gateway has no callback URL"})
		return
	}
	msg := inboundMessage{Type: "inbound", ID: "gw-in-" + newReference()[3:], From: in.From, To: in.To, Text: in.Text,
		ReceivedAt: time.Now().UTC().Format(time.RFC3339)}
	body, _ := json.Marshal(msg)
	mac := hmac.New(sha256.New, g.opts.CallbackSecret)
	mac.Write(body)
	status, err := g.newPoster(false).post(context.WithoutCancel(r.Context()), body, hex.EncodeToString(mac.Sum(nil)))
	if err != nil || status >= 300 {
		g.log.Warn("mock gateway: inbound message not taken", "status", status, "error", err)
		writeJSON(w, http.StatusBadGateway, map[string]any{"id": msg.ID, "callbackStatus": status})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"id": msg.ID, "callbackStatus": status})
}
