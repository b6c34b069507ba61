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
	"github.com/polyloop/polyloop-conform/trajectories"
)

// TestGuessesCiteRecordAndScenario holds docs/implementing.md's table of
// the points a port guesses: every row names at least one record that
// exists and at least one scenario that exists and cites one of the
// row's records, so the answer is decided and observable.
func TestGuessesCiteRecordAndScenario(t *testing.T) {
	lines, set, all := guessesTable(t)
	byID := map[string]*scenarios.Scenario{}
	for _, sc := range all {
		byID[sc.ID] = sc
	}
	id := regexp.MustCompile(`\b\d{4}\.D\d+(\.[a-z][a-z0-9-]*[a-z0-9])*`)
	span := regexp.MustCompile("`([a-z]+\\.[a-z0-9.-]+)`")
	rows := 0
	for _, line := range lines {
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

// TestGuessesSayWhatTheirRecordsSay holds each answer of docs/implementing.md's
// table of guesses to the records its row cites: every phrase the answer
// quotes (“…”) and every code span it names (a value, a name, a spelling)
// is in the text of one of those records, so a row cannot drift from its
// record (issue 54: the table said "an empty model output" where
// 0003.D7.empty says "empty or only whitespace"). Each row anchors its
// answer so: at least one quote or code span.
func TestGuessesSayWhatTheirRecordsSay(t *testing.T) {
	lines, set, all := guessesTable(t)
	scenarioIDs, fields := map[string]bool{}, map[string]bool{}
	for _, sc := range all {
		scenarioIDs[sc.ID] = true
	}
	fs, err := trajectories.Fields()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fs {
		fields[f.Path] = true
	}
	id := regexp.MustCompile(`\b\d{4}\.D\d+(\.[a-z][a-z0-9-]*[a-z0-9])*`)
	quote := regexp.MustCompile(`“([^”]+)”`)
	code := regexp.MustCompile("`([^`]+)`")
	rows := 0
	for _, line := range lines {
		if !strings.HasPrefix(line, "| ") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), " | ")
		if len(cells) != 4 {
			continue // TestGuessesCiteRecordAndScenario says why
		}
		rows++
		question, answer := strings.TrimSpace(cells[0]), cells[1]
		var text strings.Builder
		for _, r := range id.FindAllString(cells[2], -1) {
			text.WriteString(set.ByID[r].Text)
			text.WriteString("\n")
		}
		records := squeeze(text.String())
		anchors := 0
		for _, m := range quote.FindAllStringSubmatch(answer, -1) {
			anchors++
			if !strings.Contains(records, squeeze(m[1])) {
				t.Errorf("guesses row %q quotes “%s”, which none of its records (%s) says", question, m[1], cells[2])
			}
		}
		for _, m := range code.FindAllStringSubmatch(answer, -1) {
			anchors++
			if scenarioIDs[m[1]] || fields[m[1]] {
				continue // the row names where to look, not what the record says
			}
			if !strings.Contains(records, m[1]) {
				t.Errorf("guesses row %q names `%s`, which none of its records (%s) names", question, m[1], cells[2])
			}
		}
		if anchors == 0 {
			t.Errorf("guesses row %q neither quotes its records nor names a value of theirs: nothing ties its answer to %s", question, cells[2])
		}
	}
	if rows < 20 {
		t.Fatalf("read %d guesses rows; the table's format changed", rows)
	}
}

// squeeze folds every run of white space into one space.
func squeeze(s string) string { return strings.Join(strings.Fields(s), " ") }

// guessesTable returns the lines of docs/implementing.md's table of the
// points a port guesses (below its header), the decision records and the
// scenarios its rows are held to.
func guessesTable(t *testing.T) ([]string, *decisions.Set, []*scenarios.Scenario) {
	t.Helper()
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
	return strings.Split(s[i:j], "\n")[3:], set, all
}
