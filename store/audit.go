package store

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"strconv"

	"switchboard/engine"
)

// The audit chain. Each Store instance is one writer, with a random writer id made at Open.
// Its records are numbered 1, 2, … and each carries
//
//	mac = HMAC-SHA256(AuditKey, prev_mac || canonical(record))
//
// where prev_mac is the mac of the writer's previous record (empty for record 1). The
// canonical encoding of a record is the JSON array, without any whitespace,
//
//	["switchboard.audit.v1",writer,seq,at,event,actor,messageId,outcome]
//
// with seq and at (Unix milliseconds) as decimal integers and every string escaped as JSON
// requires and no more: \" \\ and control characters below U+0020 as \u00XX, all other bytes
// copied as they are. Because writer and seq are inside the mac, a record moved to another
// place of any chain no longer verifies.
//
// After every batch the writer also stores its chain head (last seq and mac) in
// audit_writers with head_mac = HMAC-SHA256(AuditKey, canonical(head)), where canonical(head) is
// ["switchboard.audit-head.v1",writer,startedAt,lastSeq,"<hex of last mac>"]; this is how
// verification notices records removed from the end of a chain.

const (
	auditRecordTag = "switchboard.audit.v1"
	auditHeadTag   = "switchboard.audit-head.v1"
)

// chainState is where a writer's chain stands: its last seq and mac.
type chainState struct {
	seq int64
	mac []byte
}

// auditRecord is one journal record as the mac covers it.
type auditRecord struct {
	writer    string
	seq       int64
	at        int64
	event     string
	actor     string
	messageID string
	outcome   string
}

// canonical is the documented byte encoding of r.
func (r *auditRecord) canonical() []byte {
	buf := make([]byte, 0, 128+len(r.event)+len(r.actor)+len(r.messageID)+len(r.outcome))
	buf = append(buf, '[')
	buf = appendJSONString(buf, auditRecordTag)
	buf = append(buf, ',')
	buf = appendJSONString(buf, r.writer)
	buf = append(buf, ',')
	buf = strconv.AppendInt(buf, r.seq, 10)
	buf = append(buf, ',')
	buf = strconv.AppendInt(buf, r.at, 10)
	for _, s := range [...]string{r.event, r.actor, r.messageID, r.outcome} {
		buf = append(buf, ',')
		buf = appendJSONString(buf, s)
	}
	return append(buf, ']')
}

// newMAC returns the HMAC-SHA256 of the audit key. Reset makes it ready again without
// recomputing the key's pads, so the writer and the verifier each keep one.
func newMAC(key []byte) hash.Hash { return hmac.New(sha256.New, key) }

// recordMAC computes the mac of r chained to prev with h, an HMAC from newMAC.
func recordMAC(h hash.Hash, prev []byte, r *auditRecord) []byte {
	h.Reset()
	h.Write(prev)
	h.Write(r.canonical())
	return h.Sum(nil)
}

// headMAC computes the mac of a writer's chain head with h, an HMAC from newMAC.
func headMAC(h hash.Hash, writer string, startedAt, lastSeq int64, lastMAC []byte) []byte {
	buf := []byte{'['}
	buf = appendJSONString(buf, auditHeadTag)
	buf = append(buf, ',')
	buf = appendJSONString(buf, writer)
	buf = append(buf, ',')
	buf = strconv.AppendInt(buf, startedAt, 10)
	buf = append(buf, ',')
	buf = strconv.AppendInt(buf, lastSeq, 10)
	buf = append(buf, ',')
	buf = appendJSONString(buf, hex.EncodeToString(lastMAC))
	buf = append(buf, ']')
	h.Reset()
	h.Write(buf)
	return h.Sum(nil)
}

// appendJSONString appends s as a JSON string, escaping only what JSON requires.
func appendJSONString(buf []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	buf = append(buf, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			buf = append(buf, '\\', c)
		case c < 0x20:
			buf = append(buf, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		default:
			buf = append(buf, c)
		}
	}
	return append(buf, '"')
}

// audit appends one record to the writer's chain inside the batch. The chain advances in
// memory only; a unit or batch that rolls back puts it back (see batch.unit and batch.finish).
func (b *batch) audit(e engine.AuditEntry) error {
	args, next := b.auditRow(e)
	if err := b.execCached(b.s.q.audit.insert, args...); err != nil {
		return fmt.Errorf("store: write audit record: %w", err)
	}
	b.chain = next
	return nil
}

// auditRow builds the next record of the batch's chain for e without writing it: the insert's
// arguments (writer, seq, at, event, actor, message id, outcome, previous MAC, MAC) and the
// chain state once it is written.
func (b *batch) auditRow(e engine.AuditEntry) ([]any, chainState) {
	r := auditRecord{
		writer:    b.w.id,
		seq:       b.chain.seq + 1,
		at:        ms(e.At),
		event:     e.Event,
		actor:     e.Actor,
		messageID: e.MessageID,
		outcome:   e.Outcome,
	}
	if e.At.IsZero() {
		r.at = ms(b.now)
	}
	prev := b.chain.mac
	if prev == nil {
		prev = []byte{}
	}
	mac := recordMAC(b.w.mac, prev, &r)
	return []any{r.writer, r.seq, r.at, r.event, r.actor, r.messageID, r.outcome, prev, mac},
		chainState{seq: r.seq, mac: mac}
}

// flushAuditHead stores the chain head when the batch advanced the chain.
func (b *batch) flushAuditHead() error {
	if b.chain.seq == b.w.chain.seq {
		return nil
	}
	head := headMAC(b.w.mac, b.w.id, b.s.startedAt, b.chain.seq, b.chain.mac)
	if err := b.execCached(b.s.q.audit.headUpsert, b.w.id, b.s.startedAt, b.chain.seq,
		b.chain.mac, head); err != nil {
		return fmt.Errorf("store: write audit head: %w", err)
	}
	return nil
}
