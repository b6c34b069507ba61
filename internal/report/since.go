package report

import "github.com/polyloop/polyloop-conform/internal/suiteversion"

// MarkSince marks each failing row with what moved since c.From: its
// scenario new, changed or unchanged, and each cited decision that is new
// or changed (docs/versioning.md, "Since a version"). polylooptest marks
// its rows with it; run --since marks the same way (internal/cli).
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
		row.Since = s
	}
}
