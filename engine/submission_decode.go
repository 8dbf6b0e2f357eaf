package engine

import (
	"encoding/json"
	"time"
)

// DecodeSubmitRequest decodes a submission body of the usual shape without reflection: one JSON
// object whose members, and those of to, template and content, have their exact names, each
// once, and values of their types (strings, times that parse, data of any kind; no null). It
// reports false for any other body, which the strict decoder (json.Decoder with
// DisallowUnknownFields) must then decode: that decoder gives the same SubmitRequest for every
// body this one accepts, and says what is wrong with the others.
func DecodeSubmitRequest(body []byte) (SubmitRequest, bool) {
	var req SubmitRequest
	x, ok := indexJSON(body)
	if !ok || x.nodes[0].kind != '{' {
		return req, false
	}
	var seen fieldSet
	ok = x.members(0, func(name, val int) bool {
		switch string(x.raw(name)) {
		case `"senderProfile"`:
			return seen.once(0) && x.str(val, &req.SenderProfile)
		case `"to"`:
			return seen.once(1) && x.recipient(val, &req.To)
		case `"template"`:
			req.Template = &TemplateRef{}
			return seen.once(2) && x.templateRef(val, req.Template)
		case `"locale"`:
			return seen.once(3) && x.str(val, &req.Locale)
		case `"data"`:
			if x.nodes[val].kind == 0 && x.raw(val)[0] == 'n' {
				return false // null: the strict decoder's RawMessage keeps it, but say no to it here
			}
			req.Data = json.RawMessage(x.raw(val))
			return seen.once(4)
		case `"content"`:
			req.Content = &DirectContent{}
			return seen.once(5) && x.content(val, req.Content)
		case `"notBefore"`:
			return seen.once(6) && x.timestamp(val, &req.NotBefore)
		case `"expiresAt"`:
			return seen.once(7) && x.timestamp(val, &req.ExpiresAt)
		case `"correlationId"`:
			return seen.once(8) && x.str(val, &req.CorrelationID)
		}
		return false
	})
	return req, ok
}

// fieldSet records which members an object had, to refuse a repeated one.
type fieldSet uint16

func (s *fieldSet) once(bit uint) bool {
	if *s&(1<<bit) != 0 {
		return false
	}
	*s |= 1 << bit
	return true
}

// str sets *dst to string node i's text; any other kind of value is refused.
func (x *jsonIndex) str(i int, dst *string) bool {
	if x.nodes[i].kind != '"' {
		return false
	}
	*dst = string(x.text(i))
	return true
}

// timestamp sets *dst from string node i as (*time.Time).UnmarshalJSON reads it, which is what the
// strict decoder calls; a value it refuses is refused.
func (x *jsonIndex) timestamp(i int, dst **time.Time) bool {
	if x.nodes[i].kind != '"' {
		return false
	}
	t := new(time.Time)
	if err := t.UnmarshalJSON(x.raw(i)); err != nil {
		return false
	}
	*dst = t
	return true
}

func (x *jsonIndex) recipient(i int, r *Recipient) bool {
	if x.nodes[i].kind != '{' {
		return false
	}
	var seen fieldSet
	return x.members(i, func(name, val int) bool {
		switch string(x.raw(name)) {
		case `"email"`:
			return seen.once(0) && x.str(val, &r.Email)
		case `"phone"`:
			return seen.once(1) && x.str(val, &r.Phone)
		case `"peer"`:
			return seen.once(2) && x.str(val, &r.Peer)
		case `"address"`:
			return seen.once(3) && x.str(val, &r.Address)
		}
		return false
	})
}

func (x *jsonIndex) templateRef(i int, t *TemplateRef) bool {
	if x.nodes[i].kind != '{' {
		return false
	}
	var seen fieldSet
	return x.members(i, func(name, val int) bool {
		switch string(x.raw(name)) {
		case `"id"`:
			return seen.once(0) && x.str(val, &t.ID)
		case `"version"`:
			return seen.once(1) && x.str(val, &t.Version)
		}
		return false
	})
}

func (x *jsonIndex) content(i int, c *DirectContent) bool {
	if x.nodes[i].kind != '{' {
		return false
	}
	var seen fieldSet
	return x.members(i, func(name, val int) bool {
		switch string(x.raw(name)) {
		case `"text"`:
			return seen.once(0) && x.str(val, &c.Text)
		case `"subject"`:
			return seen.once(1) && x.str(val, &c.Subject)
		}
		return false
	})
}
