package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestRewordOffersWireSink: serve-reference --reword offers every protocol
// option the plain reference offers, and passes the sink scenarios, and
// scenarios whose events carry an executor's own sentence or a parse
// error, under the default evidence rule (--require observed). Its events
// are reworded before they reach the runner's sink, so the events the
// runner received are the trajectory's: had they been reworded only in the
// trajectory, the runner's check of the wire against the trajectory would
// fail them, and without the wire sink the five sink scenarios would fail
// as self-reported.
func TestRewordOffersWireSink(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "report.json")
	scenarios := "cancel.with-failing-sink,events.sink-failure-continues,events.sink-failures-across-phases,events.sink-panic-continues," +
		"govdoc.real-progress-sink-locked,outcome.no-tool-call,validation.unknown-tool,parse.arguments-not-object"
	code, stdout, errs := run(t, "run", "--impl", selfImpl(t)+" serve-reference --reword", "--run", scenarios, "--format", "json", "--out", out)
	if code != ExitOK {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, ExitOK, stdout, errs)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Require string `json:"require"`
		Claimed struct {
			Options []string `json:"protocol_options"`
		} `json:"claimed"`
		Counts struct {
			Passed             int `json:"passed"`
			Failed             int `json:"failed"`
			PassedSelfReported int `json:"passed_self_reported"`
		} `json:"counts"`
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Require != "observed" {
		t.Errorf("require %q, want the default, observed", rep.Require)
	}
	for _, o := range []string{"wire-sink", "wire-measure", "journal-lines"} {
		if !slices.Contains(rep.Claimed.Options, o) {
			t.Errorf("--reword does not offer %s (offers %v)", o, rep.Claimed.Options)
		}
	}
	if rep.Counts.Passed != 8 || rep.Counts.Failed != 0 || rep.Counts.PassedSelfReported != 0 {
		t.Errorf("counts %+v, want 8 passed, none on the implementation's word", rep.Counts)
	}
}
