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
	// Deviations are the named deviations of the reference that break
	// this decision, filled by AddDeviations.
	Deviations []Deviation `json:"deviations,omitempty"`
}

// Deviation is one named deviation of the reference as the coverage
// matrix sees it: which decision it breaks and, when a selfcheck ran,
// which scenarios caught it.
type Deviation struct {
	Name     string   `json:"name"`
	Decision string   `json:"decision"`
	CaughtBy []string `json:"caught_by,omitempty"`
}

// Coverage is the decision × scenario matrix and what is wrong with it.
// With deviations added it is the decision × deviation × scenario matrix.
type Coverage struct {
	Rows      []Row    `json:"decisions"`
	Scenarios []string `json:"scenarios"`
	// Selfcheck says the deviations' CaughtBy lists come from a run.
	Selfcheck bool     `json:"selfcheck,omitempty"`
	Problems  []string `json:"problems"`
}

// MustCovered counts the accepted MUST decisions and those of them that
// some scenario cites.
func (c *Coverage) MustCovered() (must, covered int) {
	for _, r := range c.Rows {
		if r.Level == "MUST" && r.Status == "accepted" {
			must++
			if len(r.Scenarios) > 0 {
				covered++
			}
		}
	}
	return must, covered
}

// AddDeviations puts each deviation on the row of the decision it breaks.
// A deviation naming no decision of the set is a problem, and so, when
// the deviations come from a selfcheck (ran), is one that no scenario
// caught. Every accepted MUST decision without a deviation is a problem
// too: nothing shows that the suite would notice it being broken.
func (c *Coverage) AddDeviations(devs []Deviation, ran bool) {
	c.Selfcheck = ran
	at := map[string]int{}
	for i, r := range c.Rows {
		at[r.ID] = i
	}
	for _, d := range devs {
		i, ok := at[d.Decision]
		if !ok {
			c.Problems = append(c.Problems, fmt.Sprintf("deviation %s breaks %s, which no record in docs/design defines", d.Name, d.Decision))
			continue
		}
		c.Rows[i].Deviations = append(c.Rows[i].Deviations, d)
		if ran && len(d.CaughtBy) == 0 {
			c.Problems = append(c.Problems, fmt.Sprintf("deviation %s survives: no scenario catches it; %s needs a sharper scenario", d.Name, d.Decision))
		}
	}
	for _, r := range c.Rows {
		if r.Level == "MUST" && r.Status == "accepted" && len(r.Deviations) == 0 {
			c.Problems = append(c.Problems, fmt.Sprintf("MUST decision %s has no deviation in internal/deviation; add one a port could make, so selfcheck proves a scenario notices", r.ID))
		}
	}
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
	for _, sc := range scs {
		c.Scenarios = append(c.Scenarios, sc.ID)
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
