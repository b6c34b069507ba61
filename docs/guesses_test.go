package docs_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/polyloop/polyloop-conform/docs/design"
	"github.com/polyloop/polyloop-conform/internal/decisions"
	"github.com/polyloop/polyloop-conform/scenarios"
)

// TestGuessesCiteRecordAndScenario holds docs/implementing.md's table of
// the points a port guesses: every row names at least one record that
// exists and at least one scenario that exists and cites one of the
// row's records, so the answer is decided and observable.
func TestGuessesCiteRecordAndScenario(t *testing.T) {
	data, err := os.ReadFile("implementing.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	i, j := strings.Index(s, "<!-- guesses:"), strings.Index(s, "<!-- end of guesses -->")
	if i < 0 || j < i {
		t.Fatal("docs/implementing.md has no guesses table between its markers")
	}
	set, err := decisions.Load(design.FS)
	if err != nil {
		t.Fatal(err)
	}
	all, err := scenarios.LoadAll(scenarios.Embedded())
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]*scenarios.Scenario{}
	for _, sc := range all {
		byID[sc.ID] = sc
	}
	id := regexp.MustCompile(`\b\d{4}\.D\d+(\.[a-z][a-z0-9-]*[a-z0-9])*`)
	span := regexp.MustCompile("`([a-z]+\\.[a-z0-9.-]+)`")
	rows := 0
	for _, line := range strings.Split(s[i:j], "\n")[3:] {
		if !strings.HasPrefix(line, "| ") {
			continue
		}
		rows++
		cells := strings.Split(strings.Trim(line, "|"), " | ")
		if len(cells) != 4 {
			t.Errorf("guesses row %q has %d cells; want question, answer, decided by, observable in", line, len(cells))
			continue
		}
		question := strings.TrimSpace(cells[0])
		recs := id.FindAllString(cells[2], -1)
		if len(recs) == 0 {
			t.Errorf("guesses row %q cites no record", question)
		}
		for _, r := range recs {
			if _, ok := set.ByID[r]; !ok {
				t.Errorf("guesses row %q cites %s, which no record defines", question, r)
			}
		}
		shown := 0
		for _, m := range span.FindAllStringSubmatch(cells[3], -1) {
			sc, ok := byID[m[1]]
			if !ok {
				t.Errorf("guesses row %q names scenario %s, which the suite does not have", question, m[1])
				continue
			}
			if slices.ContainsFunc(recs, func(r string) bool { return slices.Contains(sc.Decisions, r) }) {
				shown++
			}
		}
		if shown == 0 {
			t.Errorf("guesses row %q names no scenario that cites its records %v", question, recs)
		}
	}
	if rows < 20 {
		t.Fatalf("read %d guesses rows; the table's format changed", rows)
	}
}
