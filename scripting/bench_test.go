package scripting

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/dop251/goja"
)

// quickstartPrepare is a prepare function shaped like the quickstart mock adapter's.
const quickstartPrepare = `function prepare(m, p) {
	return {
		target: "messages",
		headers: {"content-type": "application/json", "x-request-id": m.messageId},
		bodyFormat: "json",
		body: {to: m.recipient, from: p.sender, text: m.parts.text, reference: m.messageId},
	};
}`

// preparedRequest is what a provider decodes prepare's answer into.
type preparedRequest struct {
	Target     string            `json:"target"`
	Headers    map[string]string `json:"headers"`
	BodyFormat string            `json:"bodyFormat"`
	Body       struct {
		To        string `json:"to"`
		From      string `json:"from"`
		Text      string `json:"text"`
		Reference string `json:"reference"`
	} `json:"body"`
}

// realisticMessage and realisticProfile are prepare's arguments as a provider builds them.
func realisticMessage() map[string]any {
	return map[string]any{
		"messageId":      "01J9Z5S8Q4W6Y2X0V7T3R1P9N5",
		"generation":     1,
		"attempt":        2,
		"channel":        "sms",
		"recipient":      "+15550123456",
		"parts":          map[string]any{"text": "Reminder: your appointment at Riverside Clinic is on 2025-03-14 at 09:30. Reply STOP to opt out."},
		"idempotencyKey": nil,
	}
}

func realisticProfile() map[string]any {
	return map[string]any{"id": "reminders-sms", "channel": "sms", "sender": "+15550100", "maximumSegments": 3}
}

// BenchmarkPrepare is one pooled call of prepare through CallInto into a Go struct.
func BenchmarkPrepare(b *testing.B) {
	p, err := Compile("adapter.js", quickstartPrepare, []string{"prepare"}, nil, Limits{}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	ctx := context.Background()
	msg, profile := realisticMessage(), realisticProfile()
	b.ReportAllocs()
	cpu := processCPU()
	for b.Loop() {
		var out preparedRequest
		if ok, err := p.CallInto(ctx, "prepare", &out, msg, profile); err != nil || !ok {
			b.Fatal(ok, err)
		}
	}
	reportCPU(b, cpu)
}

// processCPU is the CPU time the process has used. On a machine shared with other work,
// CPU time per operation is a steadier figure than wall time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports the CPU time per operation since start (GC included).
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(processCPU()-start)/float64(b.N), "cpu-ns/op")
}

// BenchmarkNewRuntime is the cost of one runtime: build, lock down, load the script.
func BenchmarkNewRuntime(b *testing.B) {
	p, err := Compile("adapter.js", quickstartPrepare, []string{"prepare"}, nil, Limits{}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	b.ReportAllocs()
	cpu := processCPU()
	for b.Loop() {
		sb, err := newSandbox(p)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := p.load(sb); err != nil {
			b.Fatal(err)
		}
		sb.stop()
	}
	reportCPU(b, cpu)
}

// BenchmarkGojaCallBaseline is a bare goja call of add(a, b) on a warm runtime, outside the
// sandbox. The research notes measured about 0.6 µs for it on a quiet 2-vCPU machine;
// comparing this figure with theirs tells how loaded the machine running the benchmarks is.
func BenchmarkGojaCallBaseline(b *testing.B) {
	vm := goja.New()
	if _, err := vm.RunString("function add(a, b) { return a + b }"); err != nil {
		b.Fatal(err)
	}
	add, _ := goja.AssertFunction(vm.Get("add"))
	x, y := vm.ToValue(1), vm.ToValue(2)
	cpu := processCPU()
	for b.Loop() {
		if _, err := add(goja.Undefined(), x, y); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, cpu)
}
