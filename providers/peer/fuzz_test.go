package peer

import (
	"bytes"
	"encoding/hex"
	"testing"
	"unicode/utf8"
)

// FuzzDecodeEnvelope feeds the decoder what a hostile stream may carry. Whatever it accepts
// must satisfy the envelope's checks and survive a round trip through the encoder unchanged.
func FuzzDecodeEnvelope(f *testing.F) {
	for _, g := range protobufjsGolden {
		b, _ := hex.DecodeString(g.hex)
		f.Add(b)
	}
	f.Add([]byte{})
	f.Add([]byte("RESPONSE_GONE"))
	f.Add([]byte{0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Add(AppendEnvelope([]byte{0x48, 0x05}, Envelope{MessageID: "m", Version: 1}))
	f.Fuzz(func(t *testing.T, b []byte) {
		env, err := DecodeEnvelope(b)
		if err != nil {
			return
		}
		if env.Version != EnvelopeVersion || env.MessageID == "" || len(env.MessageID) > MaxMessageIDBytes ||
			!utf8.ValidString(env.MessageID) || env.Payload == nil {
			t.Fatalf("accepted an envelope that breaks the checks: %+v", env)
		}
		again, err := DecodeEnvelope(AppendEnvelope(nil, env))
		if err != nil {
			t.Fatalf("re-encoded envelope does not decode: %v", err)
		}
		if again.MessageID != env.MessageID || again.TsMs != env.TsMs || !bytes.Equal(again.Payload, env.Payload) {
			t.Fatalf("round trip changed %+v into %+v", env, again)
		}
	})
}
