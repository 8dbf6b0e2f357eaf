package engine

import (
	"encoding/json"
	"time"

	"switchboard/packages/jsonread"
)

// SubmitRequest is the body of POST /v1/messages, as engine/api decodes it (docs/api.md):
// members named exactly, none unknown, none repeated.
type SubmitRequest struct {
	SenderProfile string
	To            Recipient
	Template      *TemplateRef
	Locale        string
	// Data is the template data as the body holds it (absent: no data member).
	Data          jsonread.Value
	Content       *DirectContent
	NotBefore     *time.Time
	ExpiresAt     *time.Time
	CorrelationID string
}

// TemplateRef names a template version.
type TemplateRef struct {
	ID      string `json:"id"`
	Version string `json:"version"`
}

// DirectContent is a message without a template, for access profiles that allow it.
// Email takes subject and text, sms and chat text, peer text (its body), push title, body and
// optionally data.
type DirectContent struct {
	Text    string `json:"text,omitempty"`
	Subject string `json:"subject,omitempty"`
	// Title and Body are a push notification's.
	Title string `json:"title,omitempty"`
	Body  string `json:"body,omitempty"`
	// Data is a push notification's data object as the body holds it (its JSON text), nil
	// when absent.
	Data json.RawMessage `json:"data,omitempty"`
}

// Caller is an authenticated principal with its access profile, as the engine sees it.
type Caller struct {
	Issuer  string
	Subject string
	// Pseudonym is the keyed pseudonym of (issuer, subject): what the journal and the message
	// record hold instead of the caller's identity.
	Pseudonym string
	Profile   string // access profile id
	Role      string // sender | operator | receiver
}

// AcceptedBody is the 202 answer of a submission.
type AcceptedBody struct {
	ID     string            `json:"id"`
	Status string            `json:"status"`
	Links  map[string]string `json:"links"`
}

// acceptedResponse is the 202 body of a new message: exactly what json.Marshal writes for
// AcceptedBody{ID: id, Status: "queued", Links: MessageLinks(id)}, built without reflection and
// maps because every acceptance writes one. An id that would need escaping (message ids are
// UUIDs, which never do) goes through json.Marshal.
func acceptedResponse(id string) ([]byte, error) {
	for i := 0; i < len(id); i++ {
		if !htmlSafe(id[i]) {
			return json.Marshal(AcceptedBody{ID: id, Status: string(DispatchQueued), Links: MessageLinks(id)})
		}
	}
	out := make([]byte, 0, 96+3*len(id))
	out = append(out, `{"id":"`...)
	out = append(out, id...)
	out = append(out, `","status":"`+string(DispatchQueued)+`","links":{"cancel":"/v1/messages/`...)
	out = append(out, id...)
	out = append(out, `/cancel","self":"/v1/messages/`...)
	out = append(out, id...)
	return append(out, `"}}`...), nil
}

// MessageLinks are the links of a message view and of a 202 answer.
func MessageLinks(id string) map[string]string {
	return map[string]string{
		"self":   "/v1/messages/" + id,
		"cancel": "/v1/messages/" + id + "/cancel",
	}
}
