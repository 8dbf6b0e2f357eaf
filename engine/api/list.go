package api

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"switchboard/engine"
)

// GET /v1/messages (docs/api.md, "List messages"): message views newest first, filtered by
// metadata, paged by cursor. An operator sees every message, a sender only those it submitted.

// Page sizes of GET /v1/messages.
const (
	DefaultMessageLimit = 50
	MaxMessageLimit     = 500
)

// MessageList is the answer of GET /v1/messages.
type MessageList struct {
	Messages []MessageView `json:"messages"`
	// Next is the cursor to pass as after for the next page; null after the last page.
	Next *string `json:"next"`
}

// listParams are the query parameters of the listing.
var listParams = []string{"status", "senderProfile", "channel", "acceptedAfter", "acceptedBefore", "after", "limit"}

// listMessages is GET /v1/messages. An unknown or repeated parameter, a bad value or a cursor
// that no listing made is 400 request.invalid.
func (s *Server) listMessages(w http.ResponseWriter, r *http.Request, caller engine.Caller) {
	q, err := parseListQuery(r.URL.Query())
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	if caller.Role != "operator" {
		q.Caller = caller.Pseudonym
	}
	page, err := s.cfg.Store.ListMessages(r.Context(), q)
	if err != nil {
		if !errors.Is(err, engine.ErrInvalidCursor) {
			err = &engine.Problem{Code: engine.CodeServiceUnavailable, Detail: "messages cannot be listed now", Err: err}
		}
		s.writeProblem(w, r, err)
		return
	}
	out := MessageList{Messages: make([]MessageView, 0, len(page.Messages))}
	for i := range page.Messages {
		out.Messages = append(out.Messages, NewMessageView(&page.Messages[i], caller.Role == "operator"))
	}
	if page.Next != "" {
		out.Next = &page.Next
	}
	writeJSON(w, http.StatusOK, out)
}

// parseListQuery reads the listing's parameters into a newest-first query with attempts.
func parseListQuery(v url.Values) (engine.MessageQuery, error) {
	q := engine.MessageQuery{Order: engine.NewestFirst, WithAttempts: true, Limit: DefaultMessageLimit}
	invalid := func(detail string) (engine.MessageQuery, error) {
		return engine.MessageQuery{}, engine.NewProblem(engine.CodeRequestInvalid, detail)
	}
	for k, vals := range v {
		if !slices.Contains(listParams, k) {
			return invalid("unknown query parameter; the listing takes status, senderProfile, channel, acceptedAfter, acceptedBefore, after and limit")
		}
		if len(vals) != 1 || vals[0] == "" {
			return invalid("give each query parameter once, with a value")
		}
	}
	if st := v.Get("status"); st != "" {
		if !slices.Contains(engine.Statuses(), st) {
			return invalid("status must be one of the message statuses")
		}
		q.Status = st
	}
	if c := v.Get("channel"); c != "" {
		if c != string(engine.ChannelEmail) && c != string(engine.ChannelSMS) && c != string(engine.ChannelPeer) {
			return invalid("channel must be email, sms or peer")
		}
		q.Channel = engine.Channel(c)
	}
	if p := v.Get("senderProfile"); p != "" {
		if len(p) > 128 {
			return invalid("senderProfile is longer than any profile id")
		}
		q.SenderProfile = p
	}
	for _, t := range []struct {
		name string
		dst  *time.Time
	}{{"acceptedAfter", &q.AcceptedAfter}, {"acceptedBefore", &q.AcceptedBefore}} {
		if text := v.Get(t.name); text != "" {
			at, err := time.Parse(time.RFC3339Nano, text)
			if err != nil {
				return invalid(t.name + " must be an RFC 3339 time")
			}
			*t.dst = at
		}
	}
	if text := v.Get("limit"); text != "" {
		n, err := strconv.Atoi(text)
		if err != nil || n < 1 || n > MaxMessageLimit {
			return invalid("limit must be an integer between 1 and " + strconv.Itoa(MaxMessageLimit))
		}
		q.Limit = n
	}
	q.After = v.Get("after")
	if len(q.After) > 512 {
		return invalid("after must be the next cursor of an earlier page")
	}
	return q, nil
}
