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
	// Timestamp is when the change the event reports happened: the message's updatedAt, or the
	// entry's receivedAt. Like the id, it is a function of the subject and its sequence, so every
	// delivery of one event carries the same body.
	Timestamp time.Time `json:"timestamp"`
	Data      any       `json:"data"`
}

// statusData is the data of a message.status event: the message view with its sequence.
type statusData struct {
	api.MessageView
	Sequence int64 `json:"sequence"`
}

// messageBody builds a message.status event of m, returning its id and body.
func messageBody(m *engine.Message) (string, []byte, error) {
	id := engine.EventID(engine.EventMessageStatus, m.ID, m.Sequence)
	body, err := json.Marshal(envelope{Type: engine.EventMessageStatus, ID: id, Timestamp: m.UpdatedAt.UTC(),
		Data: statusData{MessageView: api.NewMessageView(m, false), Sequence: m.Sequence}})
	return id, body, err
}

// deviceBody builds a device.unregistered event of a claimed row, whose data was written with
// the outcome it reports: the event's timestamp is that outcome's time.
func deviceBody(c *engine.EventClaim) (string, []byte, error) {
	var data engine.DeviceUnregistered
	if err := json.Unmarshal(c.Data, &data); err != nil {
		return "", nil, err
	}
	id := engine.EventID(engine.EventDeviceUnregistered, c.Subject, c.Sequence)
	body, err := json.Marshal(envelope{Type: engine.EventDeviceUnregistered, ID: id, Timestamp: data.At.UTC(), Data: data})
	return id, body, err
}

// inboxBody builds an inbox.received event of e, returning its id and body.
func inboxBody(e *engine.InboxEntry) (string, []byte, error) {
	id := engine.EventID(engine.EventInboxReceived, e.ID, 1)
	body, err := json.Marshal(envelope{Type: engine.EventInboxReceived, ID: id, Timestamp: e.ReceivedAt.UTC(),
		Data: api.NewInboxEntryView(e)})
	return id, body, err
}
