package store

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"switchboard/engine"
)

// The prototype's loop over the real schema and statements.
func TestZZProtoReal(t *testing.T) {
	for _, variant := range []string{"real", "skip-idem", "skip-audit", "skip-payload", "skip-msg", "real", "skip-idem", "skip-audit", "skip-payload", "skip-msg"} {
		path := filepath.Join(t.TempDir(), "x.db")
		s, err := Open(context.Background(), Config{Path: path, AuditKey: internalKey, Migrate: true})
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
		db := sqlx.MustOpen("sqlite3", "file:"+path+"?_journal_mode=WAL&_synchronous=NORMAL&_txlock=immediate&_foreign_keys=1")
		db.SetMaxOpenConns(1)
		if variant == "no-msg-indexes" {
			db.MustExec("DROP INDEX messages_due; DROP INDEX messages_size; DROP INDEX messages_expiry;")
		}
		ctx := context.Background()
		conn, _ := db.Connx(ctx)
		q := newSQLiteQueries(db.Rebind)
		prep := func(x string) *sqlx.Stmt {
			st, err := conn.PreparexContext(ctx, x)
			if err != nil {
				t.Fatal(err)
			}
			return st
		}
		idem, msg, pay, aud := prep(q.accept.idemInsert), prep(q.msg.insert), prep(q.msg.insertPayload), prep(q.audit.insert)
		type req struct {
			it   acceptItem
			done chan error
		}
		reqs := make(chan req, 256)
		mac := newMAC(internalKey)
		go func() {
			seq := int64(0)
			prev := []byte{}
			for r := range reqs {
				batch := []req{r}
			drain:
				for len(batch) < 256 {
					select {
					case r := <-reqs:
						batch = append(batch, r)
					default:
						break drain
					}
				}
				conn.ExecContext(ctx, "BEGIN IMMEDIATE")
				for _, r := range batch {
					it := r.it
					if variant == "skip-idem" {
					} else if _, err := idem.ExecContext(ctx, it.idem.Issuer, it.idem.Subject, it.idem.Key, it.idem.RequestHash, it.idem.Response, it.id, ms(it.acceptedAt), ms(it.idem.ExpiresAt)); err != nil {
						panic(err)
					}
					var id int64
					if variant != "skip-msg" {
						res, err := msg.ExecContext(ctx, it.message...)
						if err != nil {
							panic(err)
						}
						id, _ = res.LastInsertId()
					}
					if variant != "skip-payload" && variant != "skip-msg" {
						pay.ExecContext(ctx, id, it.payload)
					}
					seq++
					rec := auditRecord{writer: "w", seq: seq, at: 1, event: "message.accepted", actor: "a", messageID: it.id, outcome: "queued"}
					m := recordMAC(mac, prev, &rec)
					if variant != "skip-audit" {
						aud.ExecContext(ctx, "w", seq, 1, rec.event, rec.actor, rec.messageID, rec.outcome, prev, m)
					}
					prev = m
				}
				conn.ExecContext(ctx, "COMMIT")
				for _, r := range batch {
					r.done <- nil
				}
			}
		}()
		now := time.Now().UTC()
		const n = 20000
		var wg sync.WaitGroup
		start := time.Now()
		var ctr sync.Mutex
		next := 0
		for range 32 {
			wg.Go(func() {
				for {
					ctr.Lock()
					next++
					i := next
					ctr.Unlock()
					if i > n {
						return
					}
					id, _ := uuid.NewV7()
					a := engine.Acceptance{
						Idempotency: engine.IdempotencyRecord{Issuer: "iss", Subject: "sub", Key: "k" + id.String(), RequestHash: []byte("0123456789abcdef0123456789abcdef"), Response: []byte(`{"id":"` + id.String() + `"}`), ExpiresAt: now.Add(time.Hour)},
						Message:     engine.Message{ID: id.String(), Channel: "sms", SenderProfile: "p", Provider: "gw", AccessProfile: "a", AcceptedAt: now, ExpiresAt: now.Add(time.Hour)},
						Payload:     engine.Payload{Recipient: "+15550100", Parts: map[string]string{"text": string(make([]byte, 280))}},
					}
					d := make(chan error, 1)
					reqs <- req{it: prepareAcceptance(&a, now), done: d}
					<-d
				}
			})
		}
		wg.Wait()
		close(reqs)
		t.Logf("%s: %.0f messages/s", variant, n/time.Since(start).Seconds())
		conn.Close()
		db.Close()
	}
}
