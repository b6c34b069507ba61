package report

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// worse orders verdicts for merging: the row of a scenario split across
// shards takes the worst verdict any shard gave it.
var worse = map[Verdict]int{Skip: 0, Pass: 1, KnownFailing: 2, Stale: 3, Fail: 4}

// Merge joins the reports of the shards of one run (run, explore or
// selfcheck with --shard K/N) into the report the unsharded run would
// have written, apart from timings. A scenario in several shards (explore
// shards its crash points) becomes one row: the worst verdict, every
// problem (sorted by sentence), the crash points added up. The shards must
// come from the same implementation and report format.
func Merge(reports []*Report) (*Report, error) {
	if len(reports) == 0 {
		return nil, fmt.Errorf("merge: no reports given")
	}
	out := &Report{Format: FormatVersion}
	at := map[string]int{}
	errs := map[string]bool{}
	for i, r := range reports {
		impl := stripShard(r.Implementation)
		if i == 0 {
			out.SuiteVersion, out.Implementation, out.Rerun = r.SuiteVersion, impl, r.Rerun
		} else if impl != out.Implementation {
			return nil, fmt.Errorf("merge: report %d is of %q, report 1 of %q; merge the shards of one run", i+1, impl, out.Implementation)
		}
		if r.GeneratedAt.After(out.GeneratedAt) {
			out.GeneratedAt = r.GeneratedAt
		}
		out.Interrupted = out.Interrupted || r.Interrupted
		out.NotRun += r.NotRun
		for _, e := range r.Errors {
			if !errs[e] {
				errs[e] = true
				out.Errors = append(out.Errors, e)
			}
		}
		if r.Decisions != nil {
			if out.Decisions == nil {
				out.Decisions = map[string]Decision{}
			}
			maps.Copy(out.Decisions, r.Decisions)
		}
		for _, row := range r.Rows {
			j, ok := at[row.Scenario]
			if !ok {
				at[row.Scenario] = len(out.Rows)
				out.Rows = append(out.Rows, row)
				continue
			}
			m := &out.Rows[j]
			if worse[row.Verdict] > worse[m.Verdict] {
				m.Verdict = row.Verdict
			}
			m.Problems = append(m.Problems, row.Problems...)
			m.CrashPoints += row.CrashPoints
			m.Duration += row.Duration
			if m.Stderr != row.Stderr {
				m.Stderr += row.Stderr
			}
			m.Transcript += row.Transcript
			if len(m.Trajectory) == 0 {
				m.Trajectory = row.Trajectory
			}
		}
	}
	for i := range out.Rows {
		row := &out.Rows[i]
		slices.SortStableFunc(row.Problems, func(a, b Problem) int { return strings.Compare(a.Message, b.Message) })
		if row.CrashPoints > 0 {
			row.Note = CrashPointsNote(row.CrashPoints)
		}
	}
	slices.Sort(out.Errors)
	return out, nil
}

// CrashPointsNote is an exploration row's note.
func CrashPointsNote(n int) string { return fmt.Sprintf("%d crash points", n) }

// ShardSuffix marks a shard's report; Merge strips it.
func ShardSuffix(s string) string {
	if s == "" {
		return ""
	}
	return ", shard " + s
}

func stripShard(impl string) string {
	if i := strings.LastIndex(impl, ", shard "); i >= 0 {
		return impl[:i]
	}
	return impl
}
