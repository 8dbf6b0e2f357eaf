package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"switchboard/engine"
)

var internalKey = []byte("0123456789abcdef0123456789abcdef")

func openInternal(t *testing.T) *Store {
	t.Helper()
	s, err := Open(context.Background(), Config{Path: filepath.Join(t.TempDir(), "s.db"), AuditKey: internalKey, Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// waitUntil yields until cond holds, and fails the test after ten seconds of waiting for what.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited 10 s for %s", what)
		}
		runtime.Gosched()
	}
}

// TestQueryPlans checks that the hot statements walk the intended index and never sort.
func TestQueryPlans(t *testing.T) {
	t.Parallel()
	s := openInternal(t)
	cases := []struct {
		name, query string
		args        []any
		index       string
	}{
		{"due select", s.q.claim.dueSelect, []any{1, 1, 1, 1, 1, 1, 1, 1, 1}, "messages_due"},
		{"oversized count", s.q.claim.oversizedCount, []any{1, 1, 1, 1}, "messages_size"},
		{"lapsed leases", s.q.claim.lapsed, []any{1, 1}, "messages_lease"},
		{"expiry sweep", s.q.msg.expireSelect, []any{1, 1}, "messages_expiry"},
		{"stats counts", s.q.msg.statsCounts, nil, "messages_size"},
		{"stats oldest", s.q.msg.statsOldest, []any{1, 1, 1}, "messages_due"},
		{"in flight", s.q.msg.inFlight, nil, "messages_lease"},
		{"receipt match", s.q.receipt.match, []any{"p", "r"}, "messages_provider_ref"},
		{"kept receipts", s.q.receipt.pending, []any{"p", "r"}, "receipts_pending"},
		{"finish", s.q.claim.finishUpdate, []any{"submitted", "none", "none", "none", 1, 1, 1, 0, "p", "r", "", "", "", 1, "accepted", 1, "m", "t", "r"}, "receipts_pending"},
		{"message journal", s.q.operation.journal, []any{"m", 10}, "audit_message"},
		{"lapsed operations", s.q.operation.lapsed, []any{1}, "operations_lease"},
	}
	// Statements that find their rows by a list of keys must look each key up, whatever else
	// their WHERE says about the state: a page of 128 keys, padded as the writer pads them.
	for _, k := range []struct {
		name, query string
		args        []any
		index       string
	}{
		{"claim lease", s.q.claim.claimUpdate, []any{"t", 1, 1, 1, make([]int64, 128)}, "SEARCH messages USING INTEGER PRIMARY KEY"},
		{"claim payloads", s.q.claim.loadPayloads, []any{make([]int64, 128)}, "SEARCH payloads USING INTEGER PRIMARY KEY"},
		{"expiry", s.q.msg.expireUpdate, []any{1, 1, make([]string, 512)}, "SEARCH messages USING INDEX sqlite_autoindex_messages_1"},
		{"expiry attempts", s.q.msg.expireAttempt, []any{1, 1, make([]string, 512)}, "SEARCH messages USING INDEX sqlite_autoindex_messages_1"},
		{"payload erasure mark", s.q.retention.payloadMark, []any{1, make([]int64, 512)}, "SEARCH messages USING INTEGER PRIMARY KEY"},
		{"record erasure", s.q.retention.recordsDelete, []any{make([]int64, 512)}, "SEARCH messages USING INTEGER PRIMARY KEY"},
		{"receipt matches", s.q.receipt.matchMany, []any{"p", make([]string, 128)}, "SEARCH messages USING INDEX messages_provider_ref"},
		{"event subjects", s.q.events.messagesByID, []any{make([]string, 128)}, "SEARCH messages USING INDEX sqlite_autoindex_messages_1"},
		{"event attempts", s.q.events.attemptsByID, []any{make([]string, 128)}, "SEARCH attempts USING PRIMARY KEY"},
		{"event rows", s.q.events.upsertMessages, []any{"e", 1, 1, make([]string, 128), []string{"a"}}, "SEARCH messages USING INDEX sqlite_autoindex_messages_1"},
		{"event lease", s.q.events.lease, []any{"t", 1, make([]int64, 128)}, "SEARCH webhook_events USING INTEGER PRIMARY KEY"},
		{"event redelivery", s.q.events.redeliverUpdate, []any{1, make([]int64, 512)}, "SEARCH webhook_events USING INTEGER PRIMARY KEY"},
		{"event erasure", s.q.events.eraseDelete, []any{make([]int64, 512)}, "SEARCH webhook_events USING INTEGER PRIMARY KEY"},
	} {
		query, args, err := sqlx.In(k.query, k.args...)
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, struct {
			name, query string
			args        []any
			index       string
		}{k.name, s.d.rebind(query), args, k.index})
	}
	for _, l := range []struct {
		name  string
		q     engine.MessageQuery
		after listCursor
		index string
	}{
		{"newest first", engine.MessageQuery{Limit: 50}, listCursor{}, "messages_accepted"},
		{"newest first, next page", engine.MessageQuery{Limit: 50}, listCursor{acceptedAt: 5, id: "m"}, "messages_accepted"},
		{"newest first in a window", engine.MessageQuery{AcceptedAfter: time.UnixMilli(1), AcceptedBefore: time.UnixMilli(9), Limit: 50}, listCursor{}, "messages_accepted"},
		{"held, newest first", engine.MessageQuery{Status: "unknown", Limit: 50}, listCursor{acceptedAt: 5, id: "m"}, "messages_held"},
	} {
		query, args, err := listStatement(s.d.rebind, l.q, l.after, false)
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, struct {
			name, query string
			args        []any
			index       string
		}{l.name, query, args, l.index})
	}
	for _, c := range cases {
		var rows []struct {
			ID     int    `db:"id"`
			Parent int    `db:"parent"`
			NotUse int    `db:"notused"`
			Detail string `db:"detail"`
		}
		if err := s.rdb.Select(&rows, "EXPLAIN QUERY PLAN "+c.query, c.args...); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var plan []string
		for _, r := range rows {
			plan = append(plan, r.Detail)
		}
		all := strings.Join(plan, "; ")
		t.Logf("%s: %s", c.name, all)
		// A scan of the intended index in its order is a newest-first page's walk, which stops
		// after the page.
		walk := strings.Contains(all, "SCAN messages USING INDEX "+c.index)
		if !strings.Contains(all, c.index) || strings.Contains(all, "TEMP B-TREE") || (strings.Contains(all, "SCAN") && !strings.Contains(all, "COVERING INDEX") && !walk) {
			t.Errorf("%s: plan %q, want %s without sorting or a scan of the table", c.name, all, c.index)
		}
	}
}

// TestGroupCommit holds the database's write lock from another connection while requests
// queue up, and checks that the writer then commits them together.
func TestGroupCommit(t *testing.T) {
	t.Parallel()
	s := openInternal(t)
	raw, err := sqlx.Open("sqlite3", s.cfg.writeDSN(false))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	lock, err := raw.Beginx() // BEGIN IMMEDIATE: the writer's BEGIN now waits
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	const callers = 40
	var wg sync.WaitGroup
	errs := make(chan error, callers)
	for i := range callers {
		wg.Go(func() {
			a := engine.Acceptance{
				Message: engine.Message{ID: "m-" + string(rune('A'+i)), AcceptedAt: now, ExpiresAt: now.Add(time.Hour)},
				Audit:   engine.AuditEntry{Event: "message.accepted"},
			}
			errs <- s.Accept(context.Background(), []engine.Acceptance{a})[0].Err
		})
	}
	// The first batch is inside the writer, blocked at BEGIN; wait until the others are queued.
	waitUntil(t, "the requests queued", func() bool { return s.handled.Load()+int64(len(s.accepts)) >= callers })
	if err := lock.Rollback(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	// The batch that waited at BEGIN, and one for everything that queued meanwhile.
	if st := s.WriterStats(); st.Requests != callers || st.Batches > 2 {
		t.Fatalf("writer stats %+v, want %d requests in at most 2 batches", st, callers)
	}
}

// TestBusyWriterGathers: with a gather wait far longer than the test, a lone request on an
// idle writer still commits at once, and requests arriving one by one just after a batch share
// one batch, which closes as soon as it holds gatherTarget.
func TestBusyWriterGathers(t *testing.T) {
	t.Parallel()
	s := openGathering(t)
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	accept := func(id string) error {
		a := engine.Acceptance{
			Message: engine.Message{ID: id, AcceptedAt: now, ExpiresAt: now.Add(time.Hour)},
			Audit:   engine.AuditEntry{Event: "message.accepted"},
		}
		return s.Accept(context.Background(), []engine.Acceptance{a})[0].Err
	}
	if err := accept("lone"); err != nil { // an idle writer: were it to wait, this would take an hour
		t.Fatal(err)
	}
	before := s.WriterStats()
	errs := make(chan error, gatherTarget)
	for i := range gatherTarget {
		go func() { errs <- accept(fmt.Sprint("m-", i)) }()
	}
	for range gatherTarget {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	st := s.WriterStats()
	if st.Requests-before.Requests != gatherTarget || st.Batches-before.Batches != 1 {
		t.Fatalf("%d requests in %d batches, want %d in 1", st.Requests-before.Requests, st.Batches-before.Batches, gatherTarget)
	}
}

// openGathering opens a SQLite store whose busy writer waits up to an hour to fill a batch: a
// batch that runs early ran because it reached its target.
func openGathering(t *testing.T) *Store {
	t.Helper()
	s, err := Open(context.Background(), Config{Path: filepath.Join(t.TempDir(), "s.db"), AuditKey: internalKey,
		Migrate: true, GatherWait: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// TestBusyWriterGathersMoreDelivery sends a busy writer requests of delivery alone (finishes,
// here of leases that do not hold): with no acceptance among them, the batch gathers up to
// twice gatherTarget before it runs.
func TestBusyWriterGathersMoreDelivery(t *testing.T) {
	t.Parallel()
	s := openGathering(t)
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	a := engine.Acceptance{Message: engine.Message{ID: "lone", AcceptedAt: now, ExpiresAt: now.Add(time.Hour)}}
	if err := s.Accept(context.Background(), []engine.Acceptance{a})[0].Err; err != nil { // the writer is busy from here
		t.Fatal(err)
	}
	before := s.WriterStats()
	const n = deliveryGather * gatherTarget
	errs := make(chan error, n)
	for i := range n {
		go func() {
			errs <- s.Finish(context.Background(), engine.Finish{
				Lease:   engine.LeaseRef{MessageID: fmt.Sprint("m-", i), Token: "no-such-lease"},
				Attempt: engine.AttemptAccepted, Dispatch: engine.DispatchSubmitted, FinishedAt: now})
		}()
	}
	for range n {
		if err := <-errs; !errors.Is(err, engine.ErrLeaseLost) {
			t.Fatalf("Finish of a lease that does not hold: %v, want ErrLeaseLost", err)
		}
	}
	st := s.WriterStats()
	if st.Requests-before.Requests != n || st.Batches-before.Batches != 1 {
		t.Fatalf("%d requests in %d batches, want %d in 1", st.Requests-before.Requests, st.Batches-before.Batches, n)
	}
}

// TestCloseRefusesQueued closes the store while requests wait behind a batch that cannot
// begin: the batch completes, every queued request gets ErrStoreClosed, nobody hangs.
func TestCloseRefusesQueued(t *testing.T) {
	t.Parallel()
	s := openInternal(t)
	raw, err := sqlx.Open("sqlite3", s.cfg.writeDSN(false))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	lock, err := raw.Beginx()
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	const callers = 20
	errs := make(chan error, callers)
	for i := range callers {
		go func() {
			a := engine.Acceptance{
				Message: engine.Message{ID: "m-" + string(rune('A'+i)), AcceptedAt: now, ExpiresAt: now.Add(time.Hour)},
			}
			errs <- s.Accept(context.Background(), []engine.Acceptance{a})[0].Err
		}()
	}
	waitUntil(t, "the requests queued", func() bool { return s.handled.Load()+int64(len(s.accepts)) >= callers })
	closed := make(chan error)
	go func() { closed <- s.Close() }()
	for !isClosed(s.stopping) {
		runtime.Gosched()
	}
	if err := lock.Rollback(); err != nil {
		t.Fatal(err)
	}
	if err := <-closed; err != nil {
		t.Fatalf("Close: %v", err)
	}
	ok, refused := 0, 0
	for range callers {
		switch err := <-errs; {
		case err == nil:
			ok++
		case errors.Is(err, engine.ErrStoreClosed):
			refused++
		default:
			t.Fatalf("unexpected answer: %v", err)
		}
	}
	if int64(ok) != s.handled.Load() || ok+refused != callers {
		t.Fatalf("%d committed, %d refused; the writer took %d", ok, refused, s.handled.Load())
	}
}

func isClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

func TestMigrationsInOrder(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{
		"m/0001_init.sql":  {Data: []byte(`CREATE TABLE a (x INTEGER);`)},
		"m/0002_more.sql":  {Data: []byte(`CREATE TABLE b (y INTEGER); INSERT INTO b VALUES (1);`)},
		"m/README.txt":     {Data: []byte(`ignored`)},
		"dup/0001_a.sql":   {Data: []byte(`SELECT 1;`)},
		"dup/0001_b.sql":   {Data: []byte(`SELECT 1;`)},
		"badname/init.sql": {Data: []byte(`SELECT 1;`)},
	}
	for _, dir := range []string{"dup", "badname"} {
		if _, err := loadMigrations(fsys, dir); err == nil {
			t.Errorf("loadMigrations(%s) accepted a bad set", dir)
		}
	}
	list, err := loadMigrations(fsys, "m")
	if err != nil || len(list) != 2 {
		t.Fatalf("loadMigrations = %v, %v", list, err)
	}
	db, err := sqlx.Open("sqlite3", "file:"+filepath.Join(t.TempDir(), "m.db")+"?mode=rwc&_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	q := newQueries(sqliteDialect())
	ctx := context.Background()
	now := time.Unix(1, 0)
	if err := migrate(ctx, db, q, list[:1], now); err != nil {
		t.Fatal(err)
	}
	v, err := schemaVersion(ctx, db, q)
	if err != nil || v != 1 {
		t.Fatalf("version %d, %v", v, err)
	}
	if err := checkVersion(v, 2); err == nil || !strings.Contains(err.Error(), "version 1, need 2") {
		t.Fatalf("checkVersion(older) = %v", err)
	}
	for range 2 { // the second run applies nothing
		if err := migrate(ctx, db, q, list, now); err != nil {
			t.Fatal(err)
		}
	}
	var rows int
	if err := db.Get(&rows, `SELECT count(*) FROM b`); err != nil || rows != 1 {
		t.Fatalf("0002 applied %d times, %v", rows, err)
	}
	if v, _ := schemaVersion(ctx, db, q); v != 2 {
		t.Fatalf("version %d after migrating, want 2", v)
	}
}

// TestMigrationGaps: numbers may leave gaps; a database that applied a list with a gap is not at
// the schema of a later list that fills it until that list is migrated too.
func TestMigrationGaps(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{
		"early/0001_a.sql": {Data: []byte(`CREATE TABLE a (x INTEGER);`)},
		"early/0005_e.sql": {Data: []byte(`CREATE TABLE e (x INTEGER);`)},
		"later/0001_a.sql": {Data: []byte(`CREATE TABLE a (x INTEGER);`)},
		"later/0003_c.sql": {Data: []byte(`CREATE TABLE c (x INTEGER);`)},
		"later/0005_e.sql": {Data: []byte(`CREATE TABLE e (x INTEGER);`)},
	}
	early, err := loadMigrations(fsys, "early")
	if err != nil || len(early) != 2 {
		t.Fatalf("loadMigrations(early) = %v, %v", early, err)
	}
	later, err := loadMigrations(fsys, "later")
	if err != nil || len(later) != 3 {
		t.Fatalf("loadMigrations(later) = %v, %v", later, err)
	}
	db, err := sqlx.Open("sqlite3", "file:"+filepath.Join(t.TempDir(), "g.db")+"?mode=rwc&_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	q := newQueries(sqliteDialect())
	ctx := context.Background()
	if err := migrate(ctx, db, q, early, time.Unix(1, 0)); err != nil {
		t.Fatal(err)
	}
	if err := checkSchema(ctx, db, q, early); err != nil {
		t.Fatalf("checkSchema(early) after migrating early = %v", err)
	}
	if err := checkSchema(ctx, db, q, later); !errors.Is(err, ErrNotMigrated) || !strings.Contains(err.Error(), "0003_c.sql") {
		t.Fatalf("checkSchema(later) before migrating later = %v, want 0003_c.sql missing", err)
	}
	if err := migrate(ctx, db, q, later, time.Unix(2, 0)); err != nil {
		t.Fatal(err)
	}
	if err := checkSchema(ctx, db, q, later); err != nil {
		t.Fatalf("checkSchema(later) after migrating later = %v", err)
	}
}

func TestCanonicalAuditEncoding(t *testing.T) {
	t.Parallel()
	r := auditRecord{writer: "w", seq: 2, at: 1700000000000, event: "message.accepted",
		actor: "a\"b\\c\n", messageID: "m-1", outcome: "queued é"}
	want := `["switchboard.audit.v1","w",2,1700000000000,"message.accepted","a\"b\\c\u000a","m-1","queued é"]`
	if got := string(r.canonical()); got != want {
		t.Fatalf("canonical = %s\nwant        %s", got, want)
	}
}

// TestIDAfter: an inbox id drawn on a machine whose clock is behind still sorts after the last
// stored id.
func TestIDAfter(t *testing.T) {
	early := uuid.Must(uuid.NewV7FromReader(bytes.NewReader(make([]byte, 16))))
	last := "ffffffff-ffff-7fff-bfff-fffffffffffe"
	got := idAfter(early, last)
	if got <= last {
		t.Fatalf("idAfter = %s, not after %s", got, last)
	}
	if u, err := uuid.Parse(got); err != nil || u.Version() != 7 || u.Variant() != uuid.RFC4122 {
		t.Fatalf("idAfter = %s (%v): not a version 7 RFC 4122 UUID", got, err)
	}
	if fresh := uuid.Must(uuid.NewV7()); idAfter(fresh, "") != fresh.String() {
		t.Fatal("idAfter changed an id that already sorts last")
	}
}

// TestPadIn: lists grow to a power of two with their last element; other arguments stay.
func TestPadIn(t *testing.T) {
	got := padIn([]any{"token", int64(7), []int64{1, 2, 3}, []string{"a"}, []int64{}})
	want := []any{"token", int64(7), []int64{1, 2, 3, 3}, []string{"a"}, []int64{}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("padIn = %v, want %v", got, want)
	}
	if l := padList(make([]int64, 33)); len(l) != 64 {
		t.Fatalf("padList(33) has %d elements, want 64", len(l))
	}
}

// TestWriterKeepsStatementJournalsInMemory: the writer's multi-row statements (a batch's
// acceptances, a page's claim) each keep a statement journal, the pages they change as they
// were, for a rollback of that statement alone. With SQLite's default temp_store that journal
// spills to a temporary file, two writes per page (docs/benchmarks-history.md); the writer keeps it in
// memory.
func TestWriterKeepsStatementJournalsInMemory(t *testing.T) {
	t.Parallel()
	s := openInternal(t)
	var mode int
	if err := s.writers[0].conn.GetContext(context.Background(), &mode, `PRAGMA temp_store`); err != nil {
		t.Fatal(err)
	}
	if mode != 2 { // 2 is MEMORY
		t.Fatalf("the writer's temp_store is %d; want 2 (MEMORY)", mode)
	}
}

// TestMessageRowFields: messageRow.fields lists the address of every field, in the order
// messageColumns names the columns, so that a scan through it fills each field from its own
// column.
func TestMessageRowFields(t *testing.T) {
	t.Parallel()
	var r messageRow
	v := reflect.ValueOf(&r).Elem()
	byAddr := map[uintptr]string{}
	for i := range v.NumField() {
		byAddr[v.Field(i).Addr().Pointer()] = v.Type().Field(i).Tag.Get("db")
	}
	var got []string
	for _, f := range r.fields() {
		got = append(got, byAddr[reflect.ValueOf(f).Pointer()])
	}
	var want []string
	for _, c := range strings.Split(messageColumns, ",") {
		want = append(want, strings.TrimSpace(c))
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("messageRow.fields() scans\n%v\nmessageColumns names\n%v", got, want)
	}
	if len(byAddr) != len(want) {
		t.Fatalf("messageRow has %d fields, messageColumns %d columns", len(byAddr), len(want))
	}
}
