package peer

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// FrameType is the kind of one frame of the pooled protocol (docs/operations.md, "The pooled
// transport").
type FrameType uint8

// The frame types of the pooled protocol. Any other type is refused.
const (
	// FrameRequest carries one ReliableEnvelope.
	FrameRequest FrameType = 0x01
	// FrameResponse carries the answer to the request in flight: the same bytes the one-shot
	// protocol answers, RESPONSE_GONE included.
	FrameResponse FrameType = 0x02
	// FrameError carries UTF-8 text and ends the request in flight without an answer.
	FrameError FrameType = 0x03
	// FramePing asks the far side for a FramePong; it keeps the stream (and a relay circuit
	// under it) in use.
	FramePing FrameType = 0x04
	// FramePong answers a FramePing.
	FramePong FrameType = 0x05
)

// maxFrameVarint is the most bytes a varint of the frame format may take: 5 bytes hold 35 bits.
const maxFrameVarint = 5

// ErrFrame is wrapped by every malformed-frame error of FrameReader.
var ErrFrame = errors.New("malformed frame")

// String names the frame type as the docs do.
func (t FrameType) String() string {
	switch t {
	case FrameRequest:
		return "REQUEST"
	case FrameResponse:
		return "RESPONSE"
	case FrameError:
		return "ERROR"
	case FramePing:
		return "PING"
	case FramePong:
		return "PONG"
	}
	return fmt.Sprintf("0x%02x", uint8(t))
}

func (t FrameType) known() bool { return t >= FrameRequest && t <= FramePong }

// AppendFrame appends one frame to b: uvarint(bodyLength), then the body, uvarint(t) and
// payload; bodyLength counts the type's varint and the payload.
func AppendFrame(b []byte, t FrameType, payload []byte) []byte {
	return append(appendFrameHeader(b, t, len(payload)), payload...)
}

// appendFrameHeader appends what precedes a payload of n bytes in a frame of type t: its
// length and its type.
func appendFrameHeader(b []byte, t FrameType, n int) []byte {
	b = binary.AppendUvarint(b, uint64(1+n)) // every known type is one varint byte
	return append(b, byte(t))
}

// FrameReader reads the frames of one stream. ReadHeader and then Payload or Discard read one
// frame in two steps, so that a receiver can decide whether to take a frame before its payload
// is read into memory; ReadFrame does both.
type FrameReader struct {
	r       *bufio.Reader
	max     int // the largest payload taken
	pending int // payload bytes of the current frame not yet read; -1 between frames
}

// NewFrameReader reads frames from r whose payload is at most maxPayload bytes.
func NewFrameReader(r io.Reader, maxPayload int) *FrameReader {
	return &FrameReader{r: bufio.NewReader(r), max: maxPayload, pending: -1}
}

// ReadHeader reads the next frame's length and type and returns the type and the payload's
// length. It returns io.EOF, and only then, when the stream ends cleanly between frames. A
// varint over 5 bytes, an empty body, a body over the payload cap, an unknown type or a
// stream that ends inside the header are errors wrapping ErrFrame (io.ErrUnexpectedEOF for
// the last); the stream is then unusable.
func (fr *FrameReader) ReadHeader() (FrameType, int, error) {
	if fr.pending >= 0 {
		return 0, 0, fmt.Errorf("%w: the previous frame's payload was not read", ErrFrame)
	}
	bodyLen, _, err := fr.uvarint()
	if err != nil {
		return 0, 0, err // io.EOF before any byte: a clean end
	}
	if bodyLen == 0 {
		return 0, 0, fmt.Errorf("%w: empty body", ErrFrame)
	}
	// Every known type takes one varint byte: a longer type varint is refused as unknown.
	if bodyLen > uint64(fr.max)+1 {
		return 0, 0, fmt.Errorf("%w: body of %d bytes is over the %d byte cap", ErrFrame, bodyLen, fr.max+1)
	}
	typ, typLen, err := fr.uvarint()
	if errors.Is(err, io.EOF) {
		return 0, 0, fmt.Errorf("%w: frame type: %w", ErrFrame, io.ErrUnexpectedEOF)
	}
	if err != nil {
		return 0, 0, err
	}
	if typLen != 1 || !FrameType(typ).known() {
		return 0, 0, fmt.Errorf("%w: unknown frame type 0x%x (%d varint bytes)", ErrFrame, typ, typLen)
	}
	fr.pending = int(bodyLen) - 1
	return FrameType(typ), fr.pending, nil
}

// Payload reads the current frame's payload, whose length ReadHeader returned.
func (fr *FrameReader) Payload() ([]byte, error) {
	if fr.pending < 0 {
		return nil, fmt.Errorf("%w: no frame header was read", ErrFrame)
	}
	b := make([]byte, fr.pending)
	fr.pending = -1
	if _, err := io.ReadFull(fr.r, b); err != nil {
		return nil, fmt.Errorf("%w: payload: %w", ErrFrame, noEOF(err))
	}
	return b, nil
}

// Discard skips the current frame's payload without keeping it.
func (fr *FrameReader) Discard() error {
	if fr.pending < 0 {
		return fmt.Errorf("%w: no frame header was read", ErrFrame)
	}
	n := fr.pending
	fr.pending = -1
	if _, err := fr.r.Discard(n); err != nil {
		return fmt.Errorf("%w: payload: %w", ErrFrame, noEOF(err))
	}
	return nil
}

// ReadFrame reads one whole frame; io.EOF means the stream ended cleanly between frames.
func (fr *FrameReader) ReadFrame() (FrameType, []byte, error) {
	t, _, err := fr.ReadHeader()
	if err != nil {
		return 0, nil, err
	}
	payload, err := fr.Payload()
	return t, payload, err
}

// uvarint reads one varint of at most maxFrameVarint bytes and returns it with its length in
// bytes. It returns io.EOF when the stream ends before its first byte.
func (fr *FrameReader) uvarint() (uint64, int, error) {
	var v uint64
	for i := range maxFrameVarint {
		c, err := fr.r.ReadByte()
		if err != nil {
			if i > 0 || !errors.Is(err, io.EOF) {
				return 0, 0, fmt.Errorf("%w: varint: %w", ErrFrame, noEOF(err))
			}
			return 0, 0, io.EOF
		}
		v |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			return v, i + 1, nil
		}
	}
	return 0, 0, fmt.Errorf("%w: varint longer than %d bytes", ErrFrame, maxFrameVarint)
}

// noEOF turns an end of stream inside a frame into io.ErrUnexpectedEOF.
func noEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}
