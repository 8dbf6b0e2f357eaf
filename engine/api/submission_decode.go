package api

import (
	"bytes"

	"switchboard/engine"
	"switchboard/packages/jsonread"
)

// decodeSubmission decodes the body of POST /v1/messages from its index: senderProfile, to
// ({email}, {phone}, {peer}, {address} or {device}), template ({id, version}), locale, data (any
// JSON value, kept as a value of the body), content ({text, subject} or {title, body, data}), notBefore, expiresAt and correlationId, by
// their exact names. What it refuses is a request.invalid problem (see members.go).
func decodeSubmission(root jsonread.Value) (engine.SubmitRequest, error) {
	var req engine.SubmitRequest
	err := members(root, "", func(name, val jsonread.Value) error {
		switch string(name.Bytes()) {
		case "senderProfile":
			return stringMember("senderProfile", val, &req.SenderProfile)
		case "to":
			return decodeRecipient(val, &req.To)
		case "template":
			if val.Kind() == jsonread.Null {
				return nil
			}
			req.Template = &engine.TemplateRef{}
			return decodeTemplateRef(val, req.Template)
		case "locale":
			return stringMember("locale", val, &req.Locale)
		case "data":
			req.Data = val
			return nil
		case "content":
			if val.Kind() == jsonread.Null {
				return nil
			}
			req.Content = &engine.DirectContent{}
			return decodeContent(val, req.Content)
		case "notBefore":
			return timeMember("notBefore", val, &req.NotBefore)
		case "expiresAt":
			return timeMember("expiresAt", val, &req.ExpiresAt)
		case "correlationId":
			if val.Kind() == jsonread.Null {
				return nil
			}
			if err := stringMember("correlationId", val, &req.CorrelationID); err != nil {
				return err
			}
			if !validCorrelationID(req.CorrelationID) {
				return invalid("member correlationId must be 1 to 128 printable characters", errCorrelationID)
			}
			return nil
		}
		return unknownMember("", name)
	})
	return req, err
}

func decodeRecipient(v jsonread.Value, r *engine.Recipient) error {
	return members(v, "to", func(name, val jsonread.Value) error {
		switch string(name.Bytes()) {
		case "email":
			return stringMember("to.email", val, &r.Email)
		case "phone":
			return stringMember("to.phone", val, &r.Phone)
		case "peer":
			return stringMember("to.peer", val, &r.Peer)
		case "address":
			return stringMember("to.address", val, &r.Address)
		case "device":
			return stringMember("to.device", val, &r.Device)
		}
		return unknownMember("to", name)
	})
}

func decodeTemplateRef(v jsonread.Value, t *engine.TemplateRef) error {
	return members(v, "template", func(name, val jsonread.Value) error {
		switch string(name.Bytes()) {
		case "id":
			return stringMember("template.id", val, &t.ID)
		case "version":
			return stringMember("template.version", val, &t.Version)
		}
		return unknownMember("template", name)
	})
}

func decodeContent(v jsonread.Value, c *engine.DirectContent) error {
	return members(v, "content", func(name, val jsonread.Value) error {
		switch string(name.Bytes()) {
		case "text":
			return stringMember("content.text", val, &c.Text)
		case "subject":
			return stringMember("content.subject", val, &c.Subject)
		case "title":
			return stringMember("content.title", val, &c.Title)
		case "body":
			return stringMember("content.body", val, &c.Body)
		case "data":
			// Kept as its JSON text: the engine checks it as it checks a rendered data part.
			switch val.Kind() {
			case jsonread.Null:
			case jsonread.Object:
				c.Data = bytes.Clone(val.Raw())
			default:
				return invalid("member content.data must be an object of strings", errContentData)
			}
			return nil
		}
		return unknownMember("content", name)
	})
}
