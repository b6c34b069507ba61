package trajectories_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/polyloop/polyloop-conform/docs/design"
	"github.com/polyloop/polyloop-conform/internal/decisions"
	"github.com/polyloop/polyloop-conform/trajectories"
)

// TestImplementingGuideTiesEveryField keeps docs/implementing.md's table
// of fields complete: every field of the trajectory schema is named in a
// row, and every row cites at least one decision record that exists.
func TestImplementingGuideTiesEveryField(t *testing.T) {
	page, err := os.ReadFile("../docs/implementing.md")
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- fields-by-record:", "<!-- end of fields-by-record -->"
	s := string(page)
	i, j := strings.Index(s, begin), strings.Index(s, end)
	if i < 0 || j < i {
		t.Fatal("docs/implementing.md has no fields-by-record table")
	}
	table := s[i:j]
	fields, err := trajectories.Fields()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fields {
		if !strings.Contains(table, "`"+f.Path+"`") {
			t.Errorf("docs/implementing.md: field %s has no row naming the record that governs it", f.Path)
		}
	}
	set, err := decisions.Load(design.FS)
	if err != nil {
		t.Fatal(err)
	}
	id := regexp.MustCompile(`\b\d{4}\.D\d+(\.[a-z][a-z0-9.-]*[a-z0-9])?`)
	for _, row := range strings.Split(table, "\n") {
		if !strings.HasPrefix(row, "| `") {
			continue
		}
		cells := strings.Split(row, "|")
		cited := id.FindAllString(cells[len(cells)-2], -1)
		if len(cited) == 0 && !strings.Contains(row, "`format`") {
			t.Errorf("docs/implementing.md: row %q cites no decision record", row)
		}
		for _, c := range cited {
			if _, ok := set.ByID[c]; !ok {
				t.Errorf("docs/implementing.md: row %q cites %s, which no record defines", row, c)
			}
		}
	}
}
