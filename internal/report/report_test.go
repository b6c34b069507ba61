package report

import (
	"errors"
	"testing"
)

type failingWriter struct{ after int }

func (f *failingWriter) Write(p []byte) (int, error) {
	if f.after <= 0 {
		return 0, errors.New("disk full")
	}
	f.after--
	return len(p), nil
}

// TestTextReportsWriteErrors: a report whose destination fails is an
// error, wherever in the report the failure comes.
func TestTextReportsWriteErrors(t *testing.T) {
	r := &Report{Implementation: "x", Rows: []Row{{Scenario: "a.b", Verdict: Fail, Problems: []string{"p"}}}}
	for after := 0; after < 6; after++ {
		if err := Text(&failingWriter{after: after}, r); err == nil {
			t.Errorf("failure after %d writes went unreported", after)
		}
	}
}

func TestSummary(t *testing.T) {
	r := &Report{Rows: []Row{{Verdict: Pass}, {Verdict: Fail}}, Errors: []string{"e1", "e2"}, Interrupted: true, NotRun: 3}
	if got, want := r.Summary(), "1 passed, 1 failed, 0 skipped, 0 known failing, 2 errors, 3 not run (interrupted)"; got != want {
		t.Errorf("Summary = %q, want %q", got, want)
	}
	if r.OK() {
		t.Error("an interrupted run with failures is OK")
	}
}
