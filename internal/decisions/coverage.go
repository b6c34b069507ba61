package decisions

import (
	"fmt"
	"sort"
	"strings"

	"github.com/polyloop/polyloop-conform/scenarios"
)

// Row is one decision's line of the coverage matrix.
type Row struct {
	ID        string   `json:"id"`
	Level     string   `json:"level"`
	Status    string   `json:"status"`
	Title     string   `json:"title"`
	Scenarios []string `json:"scenarios"`
}

// Coverage is the decision × scenario matrix and what is wrong with it.
type Coverage struct {
	Rows     []Row    `json:"decisions"`
	Problems []string `json:"problems"`
}

// Check builds the matrix. A problem is an accepted MUST decision that no
// MUST scenario cites (one cited only by SHOULD scenarios would pass a run
// that lists every SHOULD scenario as known failing), or a scenario that
// cites an unknown or superseded ID.
func Check(set *Set, scs []*scenarios.Scenario) *Coverage {
	cited := map[string][]string{}
	citedByMust := map[string]bool{}
	c := &Coverage{}
	for _, sc := range scs {
		for _, id := range sc.Decisions {
			d, ok := set.ByID[id]
			switch {
			case !ok:
				c.Problems = append(c.Problems, fmt.Sprintf("%s:%d: scenario %s cites %s, which no record in docs/design defines", sc.File, sc.Line("/decisions"), sc.ID, id))
			case !d.Accepted():
				c.Problems = append(c.Problems, fmt.Sprintf("%s:%d: scenario %s cites %s, which is superseded by %s; cite the new decision", sc.File, sc.Line("/decisions"), sc.ID, id, d.SupersededBy))
			}
			cited[id] = append(cited[id], sc.ID)
			citedByMust[id] = citedByMust[id] || sc.Level == "MUST"
		}
	}
	for _, id := range set.Order {
		d := set.ByID[id]
		scs := cited[id]
		sort.Strings(scs)
		if scs == nil {
			scs = []string{}
		}
		c.Rows = append(c.Rows, Row{ID: id, Level: d.Level, Status: d.Status, Title: d.Title, Scenarios: scs})
		switch {
		case !d.Accepted() || d.Level != "MUST":
		case len(scs) == 0:
			c.Problems = append(c.Problems, fmt.Sprintf("docs/design/%s:%d: MUST decision %s has no scenario; add one that cites it", d.File, d.Line, id))
		case !citedByMust[id]:
			c.Problems = append(c.Problems, fmt.Sprintf("docs/design/%s:%d: MUST decision %s is cited only by SHOULD scenarios (%s); make one of them MUST or add a MUST scenario", d.File, d.Line, id, strings.Join(scs, ", ")))
		}
	}
	if c.Problems == nil {
		c.Problems = []string{}
	}
	return c
}
