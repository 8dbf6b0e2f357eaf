package peer

import (
	"errors"
	"fmt"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
)

// Wire constants (docs/operations.md, "The peer channel"), shared with the reliable envelope of the peer systems this channel interoperates with.
const (
	// EnvelopeVersion is the only ReliableEnvelope version this package writes and accepts.
	EnvelopeVersion = 1
	// MaxEnvelopeBytes caps what a receiver reads from one stream and what a sender reads back
	// as the answer (10 MiB). An envelope larger than this is never sent.
	MaxEnvelopeBytes = 10 << 20
	// MaxMessageIDBytes bounds an envelope's messageId. The source uses UUIDs (36 bytes);
	// the bound keeps idempotency keys small without refusing any id a real sender writes.
	MaxMessageIDBytes = 256
	// ResponseGone is the answer to a duplicate whose first response was not kept.
	ResponseGone = "RESPONSE_GONE"
)

// Field numbers of the ReliableEnvelope protobuf message.
const (
	fieldMessageID protowire.Number = 1
	fieldVersion   protowire.Number = 2
	fieldTsMs      protowire.Number = 3
	fieldPayload   protowire.Number = 4
)

// ErrEnvelope is wrapped by every DecodeEnvelope failure.
var ErrEnvelope = errors.New("failed to decode ReliableEnvelope")

// Envelope is one ReliableEnvelope: the unit a sender writes on a fresh stream.
type Envelope struct {
	MessageID string // field 1: the sender's message id (Switchboard writes the message's id)
	Version   uint32 // field 2: always EnvelopeVersion
	TsMs      uint64 // field 3: the sender's clock at encoding, milliseconds since the epoch
	Payload   []byte // field 4: the application bytes, carried unchanged
}

// AppendEnvelope appends the protobuf encoding of e to b and returns the extended slice.
// Fields are written in number order and always present, even when empty or zero, which is
// exactly what the source's protobufjs encoder emits for an envelope whose four members are
// set, so the bytes are identical for identical input.
func AppendEnvelope(b []byte, e Envelope) []byte {
	b = protowire.AppendTag(b, fieldMessageID, protowire.BytesType)
	b = protowire.AppendString(b, e.MessageID)
	b = protowire.AppendTag(b, fieldVersion, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(e.Version))
	b = protowire.AppendTag(b, fieldTsMs, protowire.VarintType)
	b = protowire.AppendVarint(b, e.TsMs)
	b = protowire.AppendTag(b, fieldPayload, protowire.BytesType)
	b = protowire.AppendBytes(b, e.Payload)
	return b
}

// EncodedSize returns len(AppendEnvelope(nil, e)) without encoding.
func EncodedSize(e Envelope) int {
	return protowire.SizeTag(fieldMessageID) + protowire.SizeBytes(len(e.MessageID)) +
		protowire.SizeTag(fieldVersion) + protowire.SizeVarint(uint64(e.Version)) +
		protowire.SizeTag(fieldTsMs) + protowire.SizeVarint(e.TsMs) +
		protowire.SizeTag(fieldPayload) + protowire.SizeBytes(len(e.Payload))
}

// DecodeEnvelope parses b as a ReliableEnvelope and checks it: version EnvelopeVersion, a
// non-empty messageId of valid UTF-8 up to MaxMessageIDBytes, the whole input at most
// MaxEnvelopeBytes. Unknown fields are skipped, as any protobuf reader does; a known field
// with the wrong wire type, a truncated field or a varint that overflows is refused. When a
// field repeats, the last one wins (protobuf's rule for scalars). The returned Payload aliases
// b. Every error wraps ErrEnvelope.
func DecodeEnvelope(b []byte) (Envelope, error) {
	var e Envelope
	if len(b) > MaxEnvelopeBytes {
		return e, fmt.Errorf("%w: %d bytes is over the %d byte cap", ErrEnvelope, len(b), MaxEnvelopeBytes)
	}
	var sawVersion bool
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return e, fmt.Errorf("%w: tag: %w", ErrEnvelope, protowire.ParseError(n))
		}
		b = b[n:]
		switch num {
		case fieldMessageID, fieldPayload:
			if typ != protowire.BytesType {
				return e, fmt.Errorf("%w: field %d has wire type %d, want bytes", ErrEnvelope, num, typ)
			}
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return e, fmt.Errorf("%w: field %d: %w", ErrEnvelope, num, protowire.ParseError(n))
			}
			b = b[n:]
			if num == fieldMessageID {
				e.MessageID = string(v)
			} else {
				e.Payload = v
			}
		case fieldVersion, fieldTsMs:
			if typ != protowire.VarintType {
				return e, fmt.Errorf("%w: field %d has wire type %d, want varint", ErrEnvelope, num, typ)
			}
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return e, fmt.Errorf("%w: field %d: %w", ErrEnvelope, num, protowire.ParseError(n))
			}
			b = b[n:]
			if num == fieldVersion {
				// uint32 fields keep the low 32 bits, as protobuf readers do; a value that
				// does not fit is not version 1 and is refused below.
				if v > 0xFFFFFFFF {
					return e, fmt.Errorf("%w: version %d does not fit uint32", ErrEnvelope, v)
				}
				e.Version, sawVersion = uint32(v), true
			} else {
				e.TsMs = v
			}
		default:
			n := protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return e, fmt.Errorf("%w: unknown field %d: %w", ErrEnvelope, num, protowire.ParseError(n))
			}
			b = b[n:]
		}
	}
	switch {
	case !sawVersion || e.Version != EnvelopeVersion:
		return e, fmt.Errorf("%w: version %d, want %d", ErrEnvelope, e.Version, EnvelopeVersion)
	case e.MessageID == "":
		return e, fmt.Errorf("%w: empty messageId", ErrEnvelope)
	case len(e.MessageID) > MaxMessageIDBytes:
		return e, fmt.Errorf("%w: messageId of %d bytes is over %d", ErrEnvelope, len(e.MessageID), MaxMessageIDBytes)
	case !utf8.ValidString(e.MessageID):
		return e, fmt.Errorf("%w: messageId is not UTF-8", ErrEnvelope)
	}
	if e.Payload == nil {
		e.Payload = []byte{}
	}
	return e, nil
}
