package api

import (
	"time"

	"switchboard/engine"
)

// MessageView is the message view (docs/api.md, "The message view"). The address is never shown.
type MessageView struct {
	ID            string              `json:"id"`
	Status        string              `json:"status"`
	Dispatch      string              `json:"dispatch"`
	Report        string              `json:"report"`
	ReportedAt    *time.Time          `json:"reportedAt,omitempty"`
	Reason        *ReasonView         `json:"reason,omitempty"`
	Channel       string              `json:"channel"`
	SenderProfile string              `json:"senderProfile"`
	To            map[string]string   `json:"to"`
	Template      *engine.TemplateRef `json:"template,omitempty"`
	CorrelationID string              `json:"correlationId,omitempty"`
	AcceptedAt    time.Time           `json:"acceptedAt"`
	NotBefore     *time.Time          `json:"notBefore,omitempty"`
	ExpiresAt     time.Time           `json:"expiresAt"`
	UpdatedAt     time.Time           `json:"updatedAt"`
	Generation    int                 `json:"generation"`
	Attempts      []AttemptView       `json:"attempts"`
	Links         map[string]string   `json:"links"`
}

// ReasonView is why a message did not end delivered or submitted (docs/api.md, "Why a message
// failed"): present on failed, unknown, cancelled and expired messages.
type ReasonView struct {
	Code string `json:"code"`
	By   string `json:"by"`
}

// AttemptView is one attempt in a message view.
type AttemptView struct {
	Generation int        `json:"generation"`
	Attempt    int        `json:"attempt"`
	Outcome    string     `json:"outcome"`
	StartedAt  time.Time  `json:"startedAt"`
	FinishedAt *time.Time `json:"finishedAt,omitempty"`
	Code       string     `json:"code,omitempty"`
}

// NewMessageView builds the view of a message for a viewer; operator says the viewer is an
// operator, which decides the links offered (see viewLinks).
func NewMessageView(m *engine.Message, operator bool) MessageView {
	v := MessageView{
		ID: m.ID, Status: m.Status(), Dispatch: string(m.Dispatch), Report: string(m.Report),
		ReportedAt: m.ReportedAt, Channel: string(m.Channel), SenderProfile: m.SenderProfile,
		To:            map[string]string{m.RecipientKind: "redacted"},
		CorrelationID: m.CorrelationID, AcceptedAt: m.AcceptedAt, NotBefore: m.NotBefore,
		ExpiresAt: m.ExpiresAt, UpdatedAt: m.UpdatedAt, Generation: m.Generation,
		Attempts: make([]AttemptView, 0, len(m.Attempts)), Links: viewLinks(m, operator),
	}
	if !m.Reason.None() {
		v.Reason = &ReasonView{Code: m.Reason.Code, By: string(m.Reason.By)}
	}
	if m.TemplateID != "" {
		v.Template = &engine.TemplateRef{ID: m.TemplateID, Version: m.TemplateVersion}
	}
	for _, a := range m.Attempts {
		v.Attempts = append(v.Attempts, AttemptView{
			Generation: a.Generation, Attempt: a.Attempt, Outcome: string(a.Outcome),
			StartedAt: a.StartedAt, FinishedAt: a.FinishedAt, Code: a.Code,
		})
	}
	return v
}

// viewLinks are the links of a message view: self always, and each action the viewer may take
// that applies to the message as it is, so that a link offered can succeed. Its submitter and
// operators may cancel a queued message; operators may also retry a failed one (when its
// payload is still kept) and settle an unknown one.
func viewLinks(m *engine.Message, operator bool) map[string]string {
	self := "/v1/messages/" + m.ID
	links := map[string]string{"self": self}
	applies := func(a engine.Action) bool {
		_, err := engine.Eligible(a, m, m.UpdatedAt) // the time only says whether it is past expiry
		return err == nil
	}
	if applies(engine.ActionCancel) {
		links["cancel"] = self + "/cancel"
	}
	if !operator {
		return links
	}
	if applies(engine.ActionRetry) {
		links["retry"] = self + "/retry"
	}
	if applies(engine.ActionSettleSent) {
		links["settle"] = self + "/settle"
	}
	return links
}
