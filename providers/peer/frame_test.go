package peer

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestFrameRoundTrip(t *testing.T) {
	t.Parallel()
	frames := []struct {
		typ     FrameType
		payload []byte
	}{
		{FrameRequest, AppendEnvelope(nil, Envelope{MessageID: "m-1", Version: 1, Payload: []byte("hi")})},
		{FrameResponse, []byte(ResponseGone)},
		{FrameError, []byte("handler failed: é")},
		{FramePing, nil},
		{FramePong, nil},
		{FrameRequest, bytes.Repeat([]byte{7}, 300)}, // a two-byte length varint
	}
	var stream []byte
	for _, f := range frames {
		stream = AppendFrame(stream, f.typ, f.payload)
	}
	fr := NewFrameReader(bytes.NewReader(stream), MaxEnvelopeBytes)
	for i, f := range frames {
		typ, payload, err := fr.ReadFrame()
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if typ != f.typ || !bytes.Equal(payload, f.payload) {
			t.Fatalf("frame %d: got %s %q, want %s %q", i, typ, payload, f.typ, f.payload)
		}
	}
	if _, _, err := fr.ReadFrame(); err != io.EOF {
		t.Fatalf("after the last frame: %v, want io.EOF", err)
	}
}

func TestFrameLayout(t *testing.T) {
	t.Parallel()
	// bodyLength counts the type varint and the payload.
	got := AppendFrame(nil, FrameResponse, []byte("ok"))
	if want := []byte{0x03, 0x02, 'o', 'k'}; !bytes.Equal(got, want) {
		t.Fatalf("frame % x, want % x", got, want)
	}
	if got := AppendFrame(nil, FramePing, nil); !bytes.Equal(got, []byte{0x01, 0x04}) {
		t.Fatalf("ping % x", got)
	}
	long := AppendFrame(nil, FrameRequest, make([]byte, 200))
	if !bytes.Equal(long[:3], []byte{0xc9, 0x01, 0x01}) { // 201 = 0xc9 0x01
		t.Fatalf("header % x", long[:3])
	}
}

func TestFrameMalformed(t *testing.T) {
	t.Parallel()
	const max = 64
	for _, tc := range []struct {
		name  string
		input []byte
		eof   bool // the error is an unexpected end of stream
	}{
		{"six-byte length varint", []byte{0x81, 0x80, 0x80, 0x80, 0x80, 0x00, 0x01}, false},
		{"six-byte length varint, all continuation", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, false},
		{"over the cap", binary.AppendUvarint(nil, max+2), false},
		{"five-byte length over the cap", []byte{0xff, 0xff, 0xff, 0xff, 0x0f}, false},
		{"empty body", []byte{0x00}, false},
		{"unknown type 0x00", []byte{0x01, 0x00}, false},
		{"unknown type 0x06", []byte{0x02, 0x06, 'x'}, false},
		{"unknown type 0x7f", []byte{0x01, 0x7f}, false},
		{"two-byte type varint", []byte{0x02, 0x81, 0x00}, false},
		{"partial length varint", []byte{0x80}, true},
		{"length without a type", []byte{0x05}, true},
		{"partial payload", []byte{0x05, 0x01, 'a', 'b'}, true},
		{"whole frame then a partial one", append(AppendFrame(nil, FramePing, nil), 0x03, 0x02), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fr := NewFrameReader(bytes.NewReader(tc.input), max)
			var err error
			for err == nil {
				_, _, err = fr.ReadFrame()
			}
			if err == io.EOF {
				t.Fatal("read as a clean end of stream")
			}
			if !errors.Is(err, ErrFrame) {
				t.Fatalf("error %v does not wrap ErrFrame", err)
			}
			if got := errors.Is(err, io.ErrUnexpectedEOF); got != tc.eof {
				t.Fatalf("error %v: unexpected EOF %v, want %v", err, got, tc.eof)
			}
		})
	}
}

// TestFrameAtTheCap: a payload of exactly the cap is taken, one byte more is refused from its
// header alone.
func TestFrameAtTheCap(t *testing.T) {
	t.Parallel()
	const max = 1000
	fr := NewFrameReader(bytes.NewReader(AppendFrame(nil, FrameRequest, make([]byte, max))), max)
	if _, n, err := fr.ReadHeader(); err != nil || n != max {
		t.Fatalf("header at the cap: %d, %v", n, err)
	}
	// Only the header is there: the refusal must not wait for the payload.
	fr = NewFrameReader(bytes.NewReader(binary.AppendUvarint(nil, max+2)), max)
	if _, _, err := fr.ReadHeader(); err == nil || !strings.Contains(err.Error(), "cap") {
		t.Fatalf("header over the cap: %v", err)
	}
}

// TestFrameDiscard: a payload can be skipped, and the next frame is read after it.
func TestFrameDiscard(t *testing.T) {
	t.Parallel()
	stream := AppendFrame(AppendFrame(nil, FrameRequest, []byte("refused")), FramePing, nil)
	fr := NewFrameReader(bytes.NewReader(stream), MaxEnvelopeBytes)
	if typ, n, err := fr.ReadHeader(); err != nil || typ != FrameRequest || n != 7 {
		t.Fatalf("header: %s %d %v", typ, n, err)
	}
	if _, _, err := fr.ReadHeader(); err == nil {
		t.Fatal("a second header before the payload was read")
	}
	if err := fr.Discard(); err != nil {
		t.Fatal(err)
	}
	if typ, _, err := fr.ReadFrame(); err != nil || typ != FramePing {
		t.Fatalf("after the discarded frame: %s %v", typ, err)
	}
}

// FuzzFrame: whatever frame is written reads back the same, and whatever bytes arrive, the
// reader either reads frames within the cap or fails with ErrFrame, never panics.
func FuzzFrame(f *testing.F) {
	f.Add(uint8(FrameRequest), []byte("envelope"), []byte{})
	f.Add(uint8(FramePing), []byte{}, []byte{0x01, 0x04, 0x01, 0x05})
	f.Add(uint8(FrameError), []byte("boom"), []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Add(uint8(FrameResponse), bytes.Repeat([]byte{1}, 130), []byte{0x02, 0x02})
	f.Fuzz(func(t *testing.T, typ uint8, payload, garbage []byte) {
		const max = 4096
		if ft := FrameType(typ); ft.known() && len(payload) <= max {
			fr := NewFrameReader(bytes.NewReader(AppendFrame(nil, ft, payload)), max)
			got, back, err := fr.ReadFrame()
			if err != nil || got != ft || !bytes.Equal(back, payload) {
				t.Fatalf("round trip of %s %q: %s %q %v", ft, payload, got, back, err)
			}
			if _, _, err := fr.ReadFrame(); err != io.EOF {
				t.Fatalf("after one frame: %v", err)
			}
		}
		fr := NewFrameReader(bytes.NewReader(garbage), max)
		for {
			got, back, err := fr.ReadFrame()
			if err == io.EOF {
				return
			}
			if err != nil {
				if !errors.Is(err, ErrFrame) {
					t.Fatalf("error %v does not wrap ErrFrame", err)
				}
				return
			}
			if !got.known() || len(back) > max {
				t.Fatalf("accepted %s with %d bytes", got, len(back))
			}
		}
	})
}
