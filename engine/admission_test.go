package engine

import (
	"testing"
	"time"
)

// fixedAdmission answers every question with cap and reports held as its time.
type fixedAdmission struct {
	cap   int
	held  time.Duration
	asked []int // the full caps it was asked about
}

func (a *fixedAdmission) ClaimCap(full int) int {
	a.asked = append(a.asked, full)
	return a.cap
}

func (a *fixedAdmission) HeldBack() time.Duration { return a.held }

func TestDispatcherClaimsWhatItsAdmissionAllows(t *testing.T) {
	t.Parallel()
	providers := map[string]Provider{"a": nil, "b": nil}
	if got := NewDispatcher(DispatcherConfig{Concurrency: 16, Providers: providers}).claimCap(); got != 32 {
		t.Fatalf("claimCap without an Admission = %d, want 32 (16 workers × 2 providers)", got)
	}
	for _, tc := range []struct {
		name      string
		answer    int
		wantCap   int
		wantAsked int
	}{
		{"the policy holds the dispatcher to its floor", 1, 1, 32},
		{"the policy lets every worker claim", 32, 32, 32},
		{"an answer below one still lets one claim through: delivery never stops", 0, 1, 32},
		{"an answer above full is cut to full", 500, 32, 32},
	} {
		a := &fixedAdmission{cap: tc.answer, held: 3 * time.Second}
		d := NewDispatcher(DispatcherConfig{Concurrency: 16, Providers: providers, Admission: a})
		if got := d.claimCap(); got != tc.wantCap {
			t.Errorf("%s: claimCap = %d, want %d", tc.name, got, tc.wantCap)
		}
		if len(a.asked) != 1 || a.asked[0] != tc.wantAsked {
			t.Errorf("%s: the policy was asked %v, want once about the full %d", tc.name, a.asked, tc.wantAsked)
		}
		if got := d.Figures().GivenWay; got != 3*time.Second {
			t.Errorf("%s: Figures().GivenWay = %v, want the policy's HeldBack, 3s", tc.name, got)
		}
	}
}

func TestIntakeCountsSubmissions(t *testing.T) {
	t.Parallel()
	in := &Intake{}
	in.take()
	in.take()
	if in.Started() != 2 {
		t.Fatalf("started %d, want 2", in.Started())
	}
	var none *Intake
	none.take()
	if none.Started() != 0 {
		t.Fatal("a nil Intake counts nothing")
	}
}
