package scripting

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// counterScript counts calls in a top-level variable, which every call declares anew: it
// always answers 1.
const counterScript = `
var calls = 0;
function f(how) {
	calls++;
	switch (how) {
	case 'throw': throw new Error('asked to');
	case 'loop': for (;;) {}
	case 'cap': return 'x'.repeat(2**30);
	case 'huge': var s = 'x'.repeat(1 << 16); return s + s;
	case 'mutate': Object.prototype.x = 1;
	}
	return calls;
}`

func TestRuntimeRetiredAfterRuntimeUses(t *testing.T) {
	t.Parallel()
	p := newProgram(t, counterScript, []string{"f"}, func(o *Options) { o.Limits.RuntimeUses = 3 })
	var got []string
	for range 7 {
		got = append(got, mustCall(t, p, "f", "count"))
	}
	if strings.Join(got, ",") != "1,1,1,1,1,1,1" {
		t.Errorf("calls seen by the script = %v, want every call to start afresh", got)
	}
	if s := p.Stats(); s.RuntimesRetired != 2 || s.RuntimesCreated != 3 || s.RuntimesDropped != 0 || s.Calls != 7 {
		t.Errorf("stats = %+v", s)
	}
}

func TestRuntimeKeptOrDroppedAfterFailures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		how   string
		class string
		kept  bool
	}{
		{"throw", ClassFailed, true},         // the script threw: the runtime is sound
		{"loop", ClassDeadline, false},       // interrupted
		{"cap", ClassFailed, false},          // the sandbox refused something
		{"huge", ClassOutputTooLarge, false}, // the result was refused
		{"mutate", ClassFailed, true},        // the frozen built-in refused: nothing changed
	}
	for _, tt := range tests {
		t.Run(tt.how, func(t *testing.T) {
			t.Parallel()
			p := newProgram(t, counterScript, []string{"f"})
			if tt.class == ClassDeadline {
				setDeadline(p, "f", testDeadline)
			}
			if got := mustCall(t, p, "f", "count"); got != "1" {
				t.Fatalf("first call = %s", got)
			}
			if _, err := call(t, p, "f", tt.how); ClassOf(err) != tt.class {
				t.Fatalf("f(%s) err = %v, want class %s", tt.how, err, tt.class)
			}
			created, dropped := uint64(2), uint64(1)
			if tt.kept {
				created, dropped = 1, 0
			}
			if got := mustCall(t, p, "f", "count"); got != "1" {
				t.Errorf("next call = %s, want 1", got)
			}
			if s := p.Stats(); s.RuntimesCreated != created || s.RuntimesDropped != dropped || s.Failures[tt.class] != 1 || s.Calls != 3 {
				t.Errorf("stats = %+v", s)
			}
		})
	}
}

func TestConcurrentCalls(t *testing.T) {
	t.Parallel()
	src := `
function f(m) {
	if (m.n % 7 === 0) throw new Error('multiple of seven');
	return {id: m.id, n: m.n * 2, upper: m.text.toUpperCase(), sum: m.items.reduce((a, b) => a + b, 0)};
}`
	p := newProgram(t, src, []string{"f"})
	const goroutines, calls = 32, 20
	var wg sync.WaitGroup
	errs := make(chan error, goroutines*calls)
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range calls {
				n := g*calls + i + 1
				out, err := p.Call(context.Background(), "f", map[string]any{
					"id": fmt.Sprintf("g%d-%d", g, i), "n": n, "text": fmt.Sprintf("text %d", n), "items": []any{n, 1, 2},
				})
				want := fmt.Sprintf(`{"id":"g%d-%d","n":%d,"upper":"TEXT %d","sum":%d}`, g, i, 2*n, n, n+3)
				switch {
				case n%7 == 0 && ClassOf(err) != ClassFailed:
					errs <- fmt.Errorf("n=%d: err = %v, want failed", n, err)
				case n%7 != 0 && (err != nil || string(out) != want):
					errs <- fmt.Errorf("n=%d: %s, %v; want %s", n, out, err, want)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	s := p.Stats()
	if s.Calls != goroutines*calls || s.Failures[ClassFailed] != goroutines*calls/7 {
		t.Errorf("stats = %+v", s)
	}
	if idle, max := p.pool.size(), 4*runtime.GOMAXPROCS(0); idle > max {
		t.Errorf("%d idle runtimes kept, more than %d", idle, max)
	}
}

func TestCloseDropsRuntimesAndRefusesCalls(t *testing.T) {
	t.Parallel()
	p := newProgram(t, counterScript, []string{"f"})
	mustCall(t, p, "f", "count")
	p.Close()
	p.Close() // idempotent
	if _, err := p.Call(context.Background(), "f", "count"); !errors.Is(err, ErrClosed) || ClassOf(err) != "" {
		t.Errorf("Call after Close: %v", err)
	}
	if !p.Has("f") {
		t.Error("Has changed after Close")
	}
	if s := p.Stats(); s.RuntimesDropped != 1 || p.pool.size() != 0 || s.Calls != 1 {
		t.Errorf("stats = %+v, idle = %d", s, p.pool.size())
	}
}

func TestObserverSeesEveryCallThatRan(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var seen []string
	p := newProgram(t, counterScript+"\nfunction g() { return null }", []string{"f", "g"}, func(o *Options) {
		o.Observer = func(entry, class string, d time.Duration) {
			mu.Lock()
			defer mu.Unlock()
			if d <= 0 {
				t.Errorf("duration %s", d)
			}
			seen = append(seen, entry+":"+class)
		}
	})
	mustCall(t, p, "f", "count")
	call(t, p, "f", "throw")
	call(t, p, "f", "huge")
	var out struct{}
	p.CallInto(context.Background(), "g", &out)
	p.CallInto(context.Background(), "f", &out, "count") // a number does not decode into a struct
	p.Call(context.Background(), "nope")                 // refused before running: not observed
	p.Call(context.Background(), "f", make(chan int))    // refused input: not observed
	want := "f: f:failed f:output-too-large g: f:output-invalid"
	if got := strings.Join(seen, " "); got != want {
		t.Errorf("observed %q, want %q", got, want)
	}
}

func TestContextEndsTheCall(t *testing.T) {
	t.Parallel()
	t.Run("cancelled while running", func(t *testing.T) {
		t.Parallel()
		// The script logs, then loops; the log handler cancels the context: no sleeping.
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		h := &captureHandler{onRecord: func(capturedRecord) { cancel() }}
		p := newProgram(t, `function f() { console.log('started'); for (;;) {} }`, []string{"f"},
			func(o *Options) { o.Logger = slog.New(h) })
		start := time.Now()
		_, err := p.Call(ctx, "f")
		if ClassOf(err) != ClassDeadline || !strings.Contains(err.Error(), "the caller's context ended (context canceled)") {
			t.Errorf("err = %v", err)
		}
		if d := time.Since(start); d > generousDeadline/2 {
			t.Errorf("took %s", d)
		}
	})
	t.Run("already cancelled", func(t *testing.T) {
		t.Parallel()
		h := &captureHandler{}
		p := newProgram(t, `function f() { console.log('ran') }`, []string{"f"}, func(o *Options) { o.Logger = slog.New(h) })
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := p.Call(ctx, "f")
		if ClassOf(err) != ClassDeadline || !strings.Contains(err.Error(), "ended before the call") {
			t.Errorf("err = %v", err)
		}
		if n := len(h.snapshot()); n != 0 {
			t.Errorf("the script ran (%d log lines)", n)
		}
	})
	t.Run("ended as the call returned", func(t *testing.T) {
		t.Parallel()
		// The caller rings the alarm for an ended context; when that ring races the call's
		// return, it may land after the call disarmed, and the runtime must then not go back
		// to the pool with the interrupt pending: the next call on it would stop at once.
		var cancel context.CancelFunc
		h := &captureHandler{onRecord: func(capturedRecord) { cancel() }}
		p := newProgram(t, `function f(log) { if (log) { console.log('done') } return 1 }`, []string{"f"},
			func(o *Options) { o.Logger = slog.New(h) })
		for i := range 300 {
			var ctx context.Context
			ctx, cancel = context.WithCancel(context.Background())
			_, _ = p.Call(ctx, "f", true) // either outcome is right for this call
			cancel()
			if out, err := p.Call(context.Background(), "f", false); err != nil || string(out) != "1" {
				t.Fatalf("call %d after a context that ended as its call returned: %s, %v", i, out, err)
			}
		}
	})
	t.Run("context deadline before the entry deadline", func(t *testing.T) {
		t.Parallel()
		p := newProgram(t, `function f() { for (;;) {} }`, []string{"f"})
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		if _, err := p.Call(ctx, "f"); ClassOf(err) != ClassDeadline || !strings.Contains(err.Error(), "context deadline exceeded") {
			t.Errorf("err = %v", err)
		}
	})
}
