package report

import (
	"fmt"
	"strings"

	"github.com/polyloop/polyloop-conform/trajectories"
)

// Repetition is one run of a scenario under run --repeat: its row (with
// the trajectory, for every verdict) and its place in the run's order.
type Repetition struct {
	Row Row
	// N is the repetition's number, 1-based, in the order it ran.
	N int
}

// MergeRepetitions joins each scenario's repetitions into one row. A
// scenario whose repetitions disagree — in verdict, or in trajectory —
// fails as nondeterministic, naming the two runs and the first
// difference; otherwise it keeps the first repetition's row. Rows come
// out in the order each scenario first appears.
//
// A repetition a signal stopped is no run to compare: it is neither
// like nor unlike the runs before it, so only the repetitions that
// finished are compared. A scenario with a stopped repetition reads as
// interrupted unless the finished ones already failed, so a stop is
// never a failure, under --repeat as anywhere else.
//
// The trajectories are compared field by field by each field's class, as
// a run compares one with its golden (docs/trajectory-format.md): a
// sentence the design leaves to the implementation may differ between
// runs as it may differ from the reference's. Under strict it is compared
// word for word, except for the directory the runner drew for each run
// (compare.Verbatim): a journal path in an error message is the
// runner's choice, not the implementation's.
func MergeRepetitions(reps []Repetition, strict bool) []Row {
	var order []string
	by := map[string][]Repetition{}
	for _, r := range reps {
		id := r.Row.Scenario
		if _, ok := by[id]; !ok {
			order = append(order, id)
		}
		by[id] = append(by[id], r)
	}
	out := make([]Row, 0, len(order))
	for _, id := range order {
		row := mergeOne(by[id], strict)
		if row.Verdict == Pass || row.Verdict == Skip {
			row.Trajectory = nil
		}
		out = append(out, row)
	}
	return out
}

// mergeOne merges one scenario's repetitions (see MergeRepetitions).
func mergeOne(rs []Repetition, strict bool) Row {
	var done, stopped []Repetition
	for _, r := range rs {
		if r.Row.Verdict == Interrupted {
			stopped = append(stopped, r)
		} else {
			done = append(done, r)
		}
	}
	if len(done) == 0 {
		row := stopped[0].Row
		row.Repetitions = len(rs)
		return row
	}
	row := done[0].Row
	row.Repetitions = len(rs)
	for _, r := range done[1:] {
		if why := differ(done[0].Row, r.Row, strict); why != "" {
			row.Verdict = Fail
			row.Problems = append(row.Problems, Problem{Source: "repeat",
				Message:   fmt.Sprintf("nondeterministic: runs %d and %d of --repeat differ: %s", done[0].N, r.N, why),
				Decisions: row.Decisions})
			break
		}
	}
	for _, r := range done[1:] {
		if worse[r.Row.Verdict] > worse[row.Verdict] {
			row.Verdict = r.Row.Verdict
			row.Problems = append(row.Problems, r.Row.Problems...)
		}
	}
	if len(stopped) > 0 && (row.Verdict == Pass || row.Verdict == Skip) {
		// The finished runs agree, but the scenario was not run the
		// number of times asked: not judged, so not passed either.
		s := stopped[0].Row
		s.Repetitions = len(rs)
		s.Note = fmt.Sprintf("interrupted by a signal in run %d of --repeat; the %d run(s) that finished agree", stopped[0].N, len(done))
		return s
	}
	return row
}

// differ says how two repetitions of one scenario differ, or "".
func differ(a, b Row, strict bool) string {
	if a.Verdict != b.Verdict {
		return fmt.Sprintf("verdict %s, then %s", a.Verdict, b.Verdict)
	}
	if string(a.Trajectory) == string(b.Trajectory) {
		return ""
	}
	_, x, err1 := trajectories.Parse("first run", a.Trajectory)
	_, y, err2 := trajectories.Parse("second run", b.Trajectory)
	if err1 != nil || err2 != nil {
		return "the trajectories differ"
	}
	d, err := trajectories.DiffRuns(x, y, strict)
	if err != nil {
		return "the trajectories differ: " + err.Error()
	}
	if len(d) == 0 {
		return ""
	}
	var parts []string
	for i, x := range d {
		if i == 3 {
			parts = append(parts, fmt.Sprintf("and %d more", len(d)-3))
			break
		}
		parts = append(parts, x.String())
	}
	return "the trajectories differ: " + strings.Join(parts, "; ")
}
