package api

import (
	"time"

	"switchboard/engine"
)

// MessageView is the message view of SPEC section 5. The address is never shown.
type MessageView struct {
	ID            string              `json:"id"`
	Status        string              `json:"status"`
	Dispatch      string              `json:"dispatch"`
	Report        string              `json:"report"`
	ReportedAt    *time.Time          `json:"reportedAt,omitempty"`
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

// AttemptView is one attempt in a message view.
type AttemptView struct {
	Generation int        `json:"generation"`
	Attempt    int        `json:"attempt"`
	Outcome    string     `json:"outcome"`
	StartedAt  time.Time  `json:"startedAt"`
	FinishedAt *time.Time `json:"finishedAt,omitempty"`
	Code       string     `json:"code,omitempty"`
}

// NewMessageView builds the view of a message.
func NewMessageView(m *engine.Message) MessageView {
	v := MessageView{
		ID: m.ID, Status: m.Status(), Dispatch: string(m.Dispatch), Report: string(m.Report),
		ReportedAt: m.ReportedAt, Channel: string(m.Channel), SenderProfile: m.SenderProfile,
		To:            map[string]string{m.RecipientKind: "redacted"},
		CorrelationID: m.CorrelationID, AcceptedAt: m.AcceptedAt, NotBefore: m.NotBefore,
		ExpiresAt: m.ExpiresAt, UpdatedAt: m.UpdatedAt, Generation: m.Generation,
		Attempts: make([]AttemptView, 0, len(m.Attempts)), Links: engine.MessageLinks(m.ID),
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
