package decisions

import (
	"fmt"
	"sort"

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
// scenario cites, or a scenario that cites an unknown or superseded ID.
func Check(set *Set, scs []*scenarios.Scenario) *Coverage {
	cited := map[string][]string{}
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
		if d.Accepted() && d.Level == "MUST" && len(scs) == 0 {
			c.Problems = append(c.Problems, fmt.Sprintf("docs/design/%s:%d: MUST decision %s has no scenario; add one that cites it", d.File, d.Line, id))
		}
	}
	if c.Problems == nil {
		c.Problems = []string{}
	}
	return c
}
