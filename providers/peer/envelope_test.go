package peer

import (
	"bytes"
	"encoding/hex"
	"errors"
	"math"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"

	"switchboard/engine"
)

// protobufjsGolden are envelopes encoded by the interoperating systems' codec (protobufjs 7,
// ReliableEnvelope built with Type/Field exactly as they build it), recorded once.
var protobufjsGolden = []struct {
	env Envelope
	hex string
}{
	{
		Envelope{MessageID: "0190f5a0-0000-7000-8000-000000000001", Version: 1, TsMs: 1764460800123, Payload: []byte("hello, peer")},
		"0a2430313930663561302d303030302d373030302d383030302d303030303030303030303031100118fbd0bc90ad33220b68656c6c6f2c2070656572",
	},
	{
		Envelope{MessageID: "x", Version: 1, TsMs: 0, Payload: []byte{}},
		"0a0178100118002200",
	},
	{
		Envelope{MessageID: "ü😀", Version: 1, TsMs: 1<<53 - 1, Payload: bytes.Repeat([]byte{7}, 200)},
		"0a06c3bcf09f9880100118ffffffffffffff0f22c801" + hex.EncodeToString(bytes.Repeat([]byte{7}, 200)),
	},
}

func TestEnvelopeIsByteCompatibleWithTheSource(t *testing.T) {
	t.Parallel()
	for _, g := range protobufjsGolden {
		got := AppendEnvelope(nil, g.env)
		if hex.EncodeToString(got) != g.hex {
			t.Fatalf("encoding of %q:\n got %x\nwant %s", g.env.MessageID, got, g.hex)
		}
		if EncodedSize(g.env) != len(got) {
			t.Fatalf("EncodedSize %d, encoded %d", EncodedSize(g.env), len(got))
		}
		want, _ := hex.DecodeString(g.hex)
		back, err := DecodeEnvelope(want)
		if err != nil {
			t.Fatal(err)
		}
		if back.MessageID != g.env.MessageID || back.Version != 1 || back.TsMs != g.env.TsMs || !bytes.Equal(back.Payload, g.env.Payload) {
			t.Fatalf("decoded %+v, want %+v", back, g.env)
		}
	}
}

func TestDecodeEnvelopeReadsLikeProtobuf(t *testing.T) {
	t.Parallel()
	base := Envelope{MessageID: "m-1", Version: 1, TsMs: 42, Payload: []byte("p")}
	// Unknown fields of every wire type are skipped; a repeated field's last value wins.
	b := protowire.AppendTag(nil, 9, protowire.VarintType)
	b = protowire.AppendVarint(b, 5)
	b = protowire.AppendTag(b, 10, protowire.Fixed32Type)
	b = protowire.AppendFixed32(b, 5)
	b = protowire.AppendTag(b, 11, protowire.BytesType)
	b = protowire.AppendBytes(b, []byte("ignored"))
	b = protowire.AppendTag(b, fieldPayload, protowire.BytesType)
	b = protowire.AppendBytes(b, []byte("first"))
	b = AppendEnvelope(b, base)
	got, err := DecodeEnvelope(b)
	if err != nil {
		t.Fatal(err)
	}
	if got.MessageID != "m-1" || got.TsMs != 42 || string(got.Payload) != "p" {
		t.Fatalf("decoded %+v", got)
	}
	// Field order does not matter, and a missing payload is an empty one.
	r := protowire.AppendTag(nil, fieldVersion, protowire.VarintType)
	r = protowire.AppendVarint(r, 1)
	r = protowire.AppendTag(r, fieldMessageID, protowire.BytesType)
	r = protowire.AppendString(r, "m-2")
	got, err = DecodeEnvelope(r)
	if err != nil || got.MessageID != "m-2" || got.Payload == nil || len(got.Payload) != 0 {
		t.Fatalf("decoded %+v, %v", got, err)
	}
	// A group (wire types 3 and 4) is skipped whole.
	g := protowire.AppendTag(nil, 5, protowire.StartGroupType)
	g = protowire.AppendTag(g, fieldVersion, protowire.VarintType)
	g = protowire.AppendVarint(g, 9)
	g = protowire.AppendTag(g, 5, protowire.EndGroupType)
	got, err = DecodeEnvelope(append(g, AppendEnvelope(nil, base)...))
	if err != nil || got.Version != 1 {
		t.Fatalf("decoded %+v, %v", got, err)
	}
}

func TestDecodeEnvelopeRefuses(t *testing.T) {
	t.Parallel()
	valid := AppendEnvelope(nil, Envelope{MessageID: "m-1", Version: 1, TsMs: 1, Payload: []byte("abc")})
	wrongType := protowire.AppendTag(nil, fieldMessageID, protowire.VarintType)
	wrongType = protowire.AppendVarint(wrongType, 1)
	wrongType = append(wrongType, valid...)
	noVersion := protowire.AppendTag(nil, fieldMessageID, protowire.BytesType)
	noVersion = protowire.AppendString(noVersion, "m-1")
	bigVersion := append(append([]byte(nil), valid...), byte(fieldVersion<<3))
	bigVersion = protowire.AppendVarint(bigVersion, math.MaxUint32+2)
	for name, b := range map[string][]byte{
		"empty":              nil,
		"truncated":          valid[:len(valid)-1],
		"garbage":            []byte("\xff\xff\xff\xff"),
		"field zero":         {0x00, 0x01},
		"wrong wire type":    wrongType,
		"no version":         noVersion,
		"version 2":          AppendEnvelope(nil, Envelope{MessageID: "m", Version: 2}),
		"version over 32":    bigVersion,
		"empty id":           AppendEnvelope(nil, Envelope{Version: 1}),
		"id not utf-8":       AppendEnvelope(nil, Envelope{MessageID: "\xff\xfe", Version: 1}),
		"id too long":        AppendEnvelope(nil, Envelope{MessageID: string(bytes.Repeat([]byte("a"), MaxMessageIDBytes+1)), Version: 1}),
		"over the cap":       AppendEnvelope(nil, Envelope{MessageID: "m", Version: 1, Payload: make([]byte, MaxEnvelopeBytes)}),
		"overlong length":    {0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f},
		"unterminated group": {0x0b},
	} {
		if _, err := DecodeEnvelope(b); !errors.Is(err, ErrEnvelope) {
			t.Errorf("%s: err %v, want ErrEnvelope", name, err)
		}
	}
}

func TestClassifyAnswer(t *testing.T) {
	t.Parallel()
	for answer, want := range map[string]engine.Outcome{
		ResponseGone:                                   {Class: engine.OutcomeAccepted, Report: engine.ReportDelivered},
		`{"accepted":true,"inboxId":"0190-abc"}`:       {Class: engine.OutcomeAccepted, Report: engine.ReportDelivered, ProviderReference: "0190-abc"},
		` {"accepted": true}`:                          {Class: engine.OutcomeAccepted, Report: engine.ReportDelivered},
		`{"accepted":false,"reason":"no such box"}`:    {Class: engine.OutcomePermanent, Code: CodeRefused},
		`{"accepted":false,"code":"peer.not-allowed"}`: {Class: engine.OutcomePermanent, Code: CodeRefused},
		`{"accepted":false,"code":"peer.over-quota"}`:  {Class: engine.OutcomeTransient, Code: CodeOverQuota, RetryAfter: time.Minute},
		`{"ok":true}`:                                  {Class: engine.OutcomeAccepted, Report: engine.ReportDelivered},
		`{"accepted":"no"}`:                            {Class: engine.OutcomeAccepted, Report: engine.ReportDelivered},
		`{`:                                            {Class: engine.OutcomeAccepted, Report: engine.ReportDelivered},
		"OK":                                           {Class: engine.OutcomeAccepted, Report: engine.ReportDelivered},
		"":                                             {Class: engine.OutcomeAccepted, Report: engine.ReportDelivered},
		"\x01":                                         {Class: engine.OutcomeAccepted, Report: engine.ReportDelivered},
	} {
		got := classifyAnswer([]byte(answer))
		got.Reason = ""
		if got != want {
			t.Errorf("answer %q: %+v, want %+v", answer, got, want)
		}
	}
}
