package report

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/polyloop/polyloop-conform/internal/shard"
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
	missing, err := missingShards(reports)
	if err != nil {
		return nil, err
	}
	out := &Report{Format: FormatVersion}
	seeds := map[string]uint64{}
	at := map[string]int{}
	errs := map[string]bool{}
	for i, r := range reports {
		impl := stripShard(r.Implementation)
		if i == 0 {
			out.SuiteVersion, out.Implementation, out.Rerun, out.Selection = r.SuiteVersion, impl, r.Rerun, r.Selection
			out.Claimed, out.Require = r.Claimed, r.Require
		} else {
			for _, d := range []struct{ what, this, first string }{
				{"of implementation", impl, out.Implementation},
				{"of suite version", r.SuiteVersion, out.SuiteVersion},
				{"of the selection --run", r.Selection, out.Selection},
				{"of the command and flags", r.Rerun, out.Rerun},
			} {
				if d.this != d.first {
					return nil, fmt.Errorf("merge: report %d is %s %q, report 1 %s %q; merge the shards of one run", i+1, d.what, d.this, d.what, d.first)
				}
			}
		}
		if r.GeneratedAt.After(out.GeneratedAt) {
			out.GeneratedAt = r.GeneratedAt
		}
		out.Interrupted = out.Interrupted || r.Interrupted
		if r.Seed != 0 {
			seeds[shardOf(r.Implementation)] = r.Seed
			if slices.ContainsFunc(r.Rows, func(row Row) bool { return strings.HasPrefix(row.Scenario, "generated.") }) {
				out.Seed = r.Seed // the shard that ran the batch
			}
		}
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
			if !strings.HasPrefix(out.Rerun, "polyloop-conform explore") {
				// Only exploration splits one scenario (its crash points)
				// across shards; a scenario twice elsewhere is two runs.
				return nil, fmt.Errorf("merge: scenario %s is in report %d and in an earlier one: the shards overlap; merge the shards of one run, each once", row.Scenario, i+1)
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
	out.Errors = append(out.Errors, missing...)
	slices.Sort(out.Errors)
	mergeSeeds(out, seeds)
	return out, nil
}

// mergeSeeds keeps the shards' seeds: one seed when every shard used the
// same (they were given one --seed), else each shard's by name, so that
// any shard can be replayed alone with its own.
func mergeSeeds(out *Report, seeds map[string]uint64) {
	distinct := map[uint64]bool{}
	for _, s := range seeds {
		distinct[s] = true
	}
	switch len(distinct) {
	case 0:
	case 1:
		for s := range distinct {
			out.Seed = s
		}
	default:
		out.ShardSeeds = seeds
	}
}

// shardOf is the "K/N" a shard's report names ("1/1" for a whole run).
func shardOf(impl string) string {
	if i := strings.LastIndex(impl, ", shard "); i >= 0 {
		return impl[i+len(", shard "):]
	}
	return "1/1"
}

// missingShards checks that the reports are the shards 1..N of one N,
// each once. A shard given twice is an error; a shard not given is a run
// error of the merged report (its job may have failed before writing
// one), so the merge can never be green with part of the suite unseen.
func missingShards(reports []*Report) ([]string, error) {
	n := -1
	seen := map[int]bool{}
	for i, r := range reports {
		sh := shard.Shard{}
		if j := strings.LastIndex(r.Implementation, ", shard "); j >= 0 {
			var err error
			if sh, err = shard.Parse(r.Implementation[j+len(", shard "):]); err != nil {
				return nil, fmt.Errorf("merge: report %d: %w", i+1, err)
			}
		}
		switch {
		case n == -1:
			n = sh.N
		case sh.N != n:
			return nil, fmt.Errorf("merge: report %d is %s, report 1 of a run split %d ways; merge the shards of one run", i+1, describeShard(sh), max(n, 1))
		}
		if sh.N > 1 {
			if seen[sh.K] {
				return nil, fmt.Errorf("merge: shard %d/%d is given twice (report %d)", sh.K, sh.N, i+1)
			}
			seen[sh.K] = true
		}
	}
	var out []string
	for k := 1; k <= n; k++ {
		if n > 1 && !seen[k] {
			out = append(out, fmt.Sprintf("shard %d/%d is missing: its report was not given, so part of the suite was not seen (did its job fail before writing one?)", k, n))
		}
	}
	return out, nil
}

func describeShard(sh shard.Shard) string {
	if sh.N <= 1 {
		return "a whole run"
	}
	return "shard " + sh.String()
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
