package api

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"switchboard/engine"
)

// GET /v1/inbox (SPEC sections 5 and 7): the peer messages this gateway received, oldest
// first, for the receiver and operator roles.

// DefaultInboxLimit is the page size of GET /v1/inbox without a limit parameter.
const DefaultInboxLimit = 100

// InboxEntryView is one received message as GET /v1/inbox, `switchboard inbox list -o json` and
// inbox.received events show it.
type InboxEntryView struct {
	ID string `json:"id"`
	// Channel is peer, sms, email or chat.
	Channel string `json:"channel"`
	// Provider is the provider that received it.
	Provider string `json:"provider"`
	// From is the sender's peer id, or its address as the gateway gives it.
	From string `json:"from"`
	// To is the address it was sent to: this host's peer id, or the gateway's number or address.
	To         string    `json:"to"`
	Protocol   string    `json:"protocol"`
	MessageID  string    `json:"messageId"`
	TsMs       uint64    `json:"tsMs"`
	ReceivedAt time.Time `json:"receivedAt"`
	// PayloadBytes is the size of the payload kept (0 once retention erased it).
	PayloadBytes int `json:"payloadBytes"`
	// Payload is the payload as text, present only when the bytes are valid UTF-8.
	Payload *string `json:"payload,omitempty"`
	// PayloadBase64 is the payload in standard base64, always present ("" when empty or erased).
	PayloadBase64 string `json:"payloadBase64"`
	// PayloadErased is true once retention erased the payload; the entry's other members stay
	// until its record is erased too.
	PayloadErased bool `json:"payloadErased,omitempty"`
}

// InboxPage is the answer of GET /v1/inbox.
type InboxPage struct {
	Entries []InboxEntryView `json:"entries"`
	// Next is the cursor to pass as after to read on: the last entry's id, or, for an empty
	// page, the cursor the page was read after, so that a reader polling the inbox keeps its
	// place ("" only for an inbox read from the start that holds nothing).
	Next string `json:"next"`
}

// NewInboxEntryView builds the view of one entry. A nil Payload is an erased one (see
// store.ListInbox); an empty non-nil one is an empty payload.
func NewInboxEntryView(e *engine.InboxEntry) InboxEntryView {
	channel := string(e.Channel)
	if channel == "" {
		channel = string(engine.ChannelPeer)
	}
	v := InboxEntryView{
		ID: e.ID, Channel: channel, Provider: e.Provider, From: e.From, To: e.To, Protocol: e.Protocol, MessageID: e.MessageID, TsMs: e.TsMs,
		ReceivedAt: e.ReceivedAt.UTC(), PayloadBytes: len(e.Payload),
		PayloadBase64: base64.StdEncoding.EncodeToString(e.Payload), PayloadErased: e.Payload == nil,
	}
	if e.Payload != nil && utf8.Valid(e.Payload) {
		text := string(e.Payload)
		v.Payload = &text
	}
	return v
}

// NewInboxPage builds the answer for the entries ListInbox returned after the cursor after.
func NewInboxPage(entries []engine.InboxEntry, next, after string) InboxPage {
	p := InboxPage{Entries: make([]InboxEntryView, 0, len(entries)), Next: next}
	for i := range entries {
		p.Entries = append(p.Entries, NewInboxEntryView(&entries[i]))
	}
	switch {
	case next != "":
	case len(entries) > 0:
		p.Next = entries[len(entries)-1].ID
	default:
		p.Next = after
	}
	return p
}

// inbox is GET /v1/inbox?after=CURSOR&limit=N. A bad limit or cursor, an unknown or repeated
// parameter is 400 request.invalid; a server wired without an inbox answers 404.
func (s *Server) inbox(w http.ResponseWriter, r *http.Request, caller engine.Caller) {
	if s.cfg.Inbox == nil {
		s.writeProblem(w, r, engine.NewProblem(engine.CodeRequestNotFound, "this server keeps no inbox"))
		return
	}
	after, limit, err := parseInboxQuery(r.URL.Query())
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	entries, next, err := s.listInbox(r, caller, after, limit)
	if err != nil {
		var p *engine.Problem
		if !errors.As(err, &p) || p.Code != engine.CodeRequestInvalid {
			err = &engine.Problem{Code: engine.CodeServiceUnavailable, Detail: "the inbox cannot be read now", Err: err}
		}
		s.writeProblem(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, NewInboxPage(entries, next, after))
}

// ProviderInbox is implemented by inboxes that list the entries of some providers only.
type ProviderInbox interface {
	// ListInboxOf is ListInbox restricted to the entries received by providers (nil: all).
	ListInboxOf(ctx context.Context, after string, limit int, providers []string) ([]engine.InboxEntry, string, error)
}

// listInbox reads a page the caller may read: a receiver whose access profile lists
// inboxProviders sees the entries of those providers only; operators and other receivers see
// every entry.
func (s *Server) listInbox(r *http.Request, caller engine.Caller, after string, limit int) ([]engine.InboxEntry, string, error) {
	if caller.Role == "receiver" && s.cfg.Package != nil {
		if ap := s.cfg.Package.AccessProfile(caller.Profile); ap != nil && ap.InboxProviders != nil {
			pi, ok := s.cfg.Inbox.(ProviderInbox)
			if !ok {
				return nil, "", engine.NewProblem(engine.CodeServiceUnavailable, "this inbox cannot be read by provider")
			}
			return pi.ListInboxOf(r.Context(), after, limit, ap.InboxProviders)
		}
	}
	return s.cfg.Inbox.ListInbox(r.Context(), after, limit)
}

// parseInboxQuery reads after (a cursor: an inbox id, case-insensitive) and limit (1 to
// engine.MaxListLimit, default DefaultInboxLimit). The cursor comes back in canonical form.
func parseInboxQuery(q url.Values) (string, int, error) {
	for k, v := range q {
		if k != "after" && k != "limit" {
			return "", 0, engine.NewProblem(engine.CodeRequestInvalid, "unknown query parameter; the inbox takes after and limit")
		}
		if len(v) != 1 {
			return "", 0, engine.NewProblem(engine.CodeRequestInvalid, "give each query parameter once")
		}
	}
	limit := DefaultInboxLimit
	if v, ok := q["limit"]; ok {
		n, err := strconv.Atoi(v[0])
		if err != nil || n < 1 || n > engine.MaxListLimit {
			return "", 0, engine.NewProblem(engine.CodeRequestInvalid,
				"limit must be an integer between 1 and "+strconv.Itoa(engine.MaxListLimit))
		}
		limit = n
	}
	after := strings.ToLower(q.Get("after"))
	if after != "" && !IsInboxCursor(after) {
		return "", 0, engine.NewProblem(engine.CodeRequestInvalid, "after must be the next cursor of an earlier inbox page")
	}
	return after, limit, nil
}

// IsInboxCursor reports whether c is an inbox cursor: a UUID in canonical lowercase form.
func IsInboxCursor(c string) bool {
	if len(c) != 36 {
		return false
	}
	for i := 0; i < len(c); i++ {
		ch := c[i]
		switch i {
		case 8, 13, 18, 23:
			if ch != '-' {
				return false
			}
		default:
			if (ch < '0' || ch > '9') && (ch < 'a' || ch > 'f') {
				return false
			}
		}
	}
	return true
}
