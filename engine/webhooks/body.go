package webhooks

import (
	"encoding/json"
	"time"

	"switchboard/engine"
	"switchboard/engine/api"
)

// envelope is the body of every delivery.
type envelope struct {
	Type string `json:"type"`
	ID   string `json:"id"`
	// Timestamp is when the change the event reports was written.
	Timestamp time.Time `json:"timestamp"`
	Data      any       `json:"data"`
}

// statusData is the data of a message.status event: the message view with its sequence.
type statusData struct {
	api.MessageView
	Sequence int64 `json:"sequence"`
}

// messageBody builds a message.status event of m, returning its id and body.
func messageBody(m *engine.Message, changedAt time.Time) (string, []byte, error) {
	id := engine.EventID(engine.EventMessageStatus, m.ID, m.Sequence)
	body, err := json.Marshal(envelope{Type: engine.EventMessageStatus, ID: id, Timestamp: changedAt.UTC(),
		Data: statusData{MessageView: api.NewMessageView(m), Sequence: m.Sequence}})
	return id, body, err
}

// inboxBody builds an inbox.received event of e, returning its id and body.
func inboxBody(e *engine.InboxEntry, changedAt time.Time) (string, []byte, error) {
	id := engine.EventID(engine.EventInboxReceived, e.ID, 1)
	body, err := json.Marshal(envelope{Type: engine.EventInboxReceived, ID: id, Timestamp: changedAt.UTC(),
		Data: api.NewInboxEntryView(e)})
	return id, body, err
}
