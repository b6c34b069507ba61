package report

import (
	"strings"
	"testing"

	"github.com/polyloop/polyloop-conform/internal/knownfail"
)

// A generated variant inherits its source scenario's entry when it fails,
// and only then: a variant that passes stays a pass (the batch may or may
// not draw the listed gap), and a variant of an unlisted source fails.
func TestMarkKnownFailing_variants(t *testing.T) {
	kf, err := knownfail.Parse("known.txt", []byte("registry.pattern-property-refused # no script data\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		row  Row
		want Verdict
		note string
	}{
		{Row{Scenario: "generated.s1-c90", Source: "registry.pattern-property-refused", Verdict: Fail}, KnownFailing, "a variant of registry.pattern-property-refused (known.txt:1: no script data)"},
		{Row{Scenario: "generated.s1-c91", Source: "registry.pattern-property-refused", Verdict: Pass}, Pass, ""},
		{Row{Scenario: "generated.s1-c92", Source: "registry.pattern-not-ecma", Verdict: Fail}, Fail, ""},
		{Row{Scenario: "registry.pattern-property-refused", Verdict: Pass}, Stale, "remove the entry"},
	} {
		row := tc.row
		MarkKnownFailing(&row, kf)
		if row.Verdict != tc.want || !strings.Contains(row.Note, tc.note) {
			t.Errorf("%s (source %q, %s): got %s %q, want %s with %q", tc.row.Scenario, tc.row.Source, tc.row.Verdict, row.Verdict, row.Note, tc.want, tc.note)
		}
	}
}
