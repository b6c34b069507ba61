package report

import "github.com/polyloop/polyloop-conform/internal/suiteversion"

// MarkSince marks each failing row with what moved since c.From: its
// scenario new, changed or unchanged, each cited decision that is new or
// changed, and a generated variant's source scenario when it is new or
// changed (docs/versioning.md, "Since a version"). A generated case cites
// the decisions it breaks (internal/generate, attribute.go). run --since
// and polylooptest's Since both mark their rows here.
func MarkSince(rows []Row, c *suiteversion.Changes) {
	for i := range rows {
		row := &rows[i]
		if row.Verdict != Fail {
			continue
		}
		s := &Since{Version: c.From, Scenario: string(c.Scenario(row.Scenario))}
		for _, id := range row.Decisions {
			if st := c.Decision(id); st == suiteversion.Added || st == suiteversion.Changed {
				if s.Decisions == nil {
					s.Decisions = map[string]string{}
				}
				s.Decisions[id] = string(st)
			}
		}
		if row.Source != "" {
			if st := c.Scenario(row.Source); st == suiteversion.Added || st == suiteversion.Changed {
				s.Source, s.SourceID = string(st), row.Source
			}
		}
		row.Since = s
	}
}
