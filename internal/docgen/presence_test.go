package docgen

import (
	"strings"
	"testing"

	"github.com/polyloop/polyloop-conform/scenarios"
	"github.com/polyloop/polyloop-conform/trajectories"
)

// TestPresenceTable renders the presence table, which fails unless every
// row agrees with the schema and every condition holds on every golden.
func TestPresenceTable(t *testing.T) {
	if _, err := trajectoryPresence(nil); err != nil {
		t.Fatal(err)
	}
}

// TestCheckPresence_catchesTheInterruptedRow: the row the presence table
// had before issue 42 ("interrupted when … its model call failed") is
// caught on the model.failure-* goldens.
func TestCheckPresence_catchesTheInterruptedRow(t *testing.T) {
	goldens, err := trajectories.Goldens()
	if err != nil {
		t.Fatal(err)
	}
	all, err := scenarios.LoadAll(scenarios.Embedded())
	if err != nil {
		t.Fatal(err)
	}
	var rows []Presence
	for _, r := range PresenceTable() {
		if r.Field == "interrupted" {
			r.When = func(a At) bool {
				return stoppedWithoutEnd(a) || a.Scenario.Faults.ModelFailure != nil
			}
		}
		rows = append(rows, r)
	}
	found, checked, err := checkRows(rows, goldens, all)
	if err != nil {
		t.Fatal(err)
	}
	if checked == 0 || len(found) == 0 || !strings.Contains(strings.Join(found, "\n"), "model.failure-not-retried.json lacks interrupted") {
		t.Fatalf("the old interrupted row passed the goldens (%d checks): %v", checked, found)
	}
}
