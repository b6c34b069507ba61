package engine

import (
	"strings"
	"testing"

	"github.com/polyloop/polyloop-conform/fakes"
	"github.com/polyloop/polyloop-conform/scenarios"
)

// TestEvidence: what a runner could have played is self-reported until it
// plays it; what no runner can observe is taken on trust either way.
func TestEvidence(t *testing.T) {
	played := map[string]bool{scenarios.PartSink: true, scenarios.PartMeasure: true, scenarios.PartJournal: true}
	for _, tc := range []struct {
		id              string
		played          map[string]bool
		opaque          bool
		staged, trusted string
	}{
		{"outcome.normal-return", nil, false, "", ""},
		{"events.sink-failure-continues", nil, false, "faults.sink", ""},
		{"events.sink-failure-continues", played, false, "", ""},
		{"journal.write-error-surfaces", played, false, "", "faults.journal_error"},
		{"resume.torn-tail", nil, false, "tear_tail", ""},
		{"resume.damaged-middle-refused", played, false, "", "the refusal"},
		{"cancel.resume-after-safe-tool", played, true, "what the journal of the stopped run holds", "the cancellation"},
		{"cancel.resume-after-safe-tool", played, false, "", "the cancellation"},
		{"executor.missing-handler", played, false, "", "the refusal"},
	} {
		sc, _ := load(t, tc.id)
		staged, trusted := Evidence(sc, tc.played, fakes.Record{JournalOpaque: tc.opaque})
		s, tr := strings.Join(staged, "; "), strings.Join(trusted, "; ")
		if (tc.staged == "") != (s == "") || !strings.Contains(s, tc.staged) || (tc.trusted == "") != (tr == "") || !strings.Contains(tr, tc.trusted) {
			t.Errorf("%s (played %v, opaque %v): staged %q, trusted %q; want %q, %q", tc.id, tc.played, tc.opaque, s, tr, tc.staged, tc.trusted)
		}
	}
}

// TestEvidence_resumeMissingParts: a resume on a machine without some of
// its parts (issue 50) rests on the implementation's word, and the staged
// evidence names each part missing once, whichever resume lacked it.
func TestEvidence_resumeMissingParts(t *testing.T) {
	sc := &scenarios.Scenario{ID: "resume.example"}
	for _, tc := range []struct {
		missing [][]string
		want    string
	}{
		{[][]string{{"keyring"}, {"keyring", "files"}}, "on a machine without its own keyring, files,"},
		{[][]string{{}}, "on no machine of its own"},
		{nil, ""},
	} {
		env := fakes.New(sc, nil)
		for _, m := range tc.missing {
			env.ResumeNotIsolated(m...)
		}
		staged, _ := Evidence(sc, nil, env.Snapshot())
		got := strings.Join(staged, "\n")
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("missing %v: staged %q, want one naming %q", tc.missing, got, tc.want)
		}
	}
}
