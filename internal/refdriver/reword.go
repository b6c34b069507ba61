package refdriver

import (
	"fmt"
	"hash/crc32"

	"github.com/polyloop/polyloop-conform/trajectories"
)

// Reword replaces every sentence the design leaves to the implementation
// with different words of the same kind, as an independent implementation
// would write them: the executor's own sentence for a synthetic outcome
// (0008.D4 rows one and two, and a decision failure, 0003.D7) in the step
// and in its event, the parse error (0003.D7), and the messages of an
// assembly error and a run error. `serve-reference --reword` serves the
// reference this way, and the suite must pass it everywhere.
//
// The list is written from the design, not read from the trajectory
// schema's comparison classes, so that a field the schema wrongly calls
// normative fails the reworded run instead of passing unnoticed.
func Reword(tr *trajectories.Trajectory) {
	type key struct {
		phase string
		step  int
	}
	synthetic := map[key]bool{}
	for i := range tr.Steps {
		s := &tr.Steps[i]
		if s.Outcome.ObservationIsSynthetic {
			synthetic[key{s.Phase, s.Index}] = true
			s.Outcome.Observation = reword(s.Outcome.Observation)
		}
		s.Action.Error = reword(s.Action.Error)
	}
	for i := range tr.Events {
		RewordEvent(&tr.Events[i], synthetic[key{tr.Events[i].Phase, tr.Events[i].Step}])
	}
	if tr.AssemblyError != nil {
		tr.AssemblyError.Message = reword(tr.AssemblyError.Message)
	}
	if tr.RunError != nil {
		tr.RunError.Message = reword(tr.RunError.Message)
	}
}

// RewordEvent words one event's implementation text as Reword does:
// its error always, its executor observation when the step's observation
// is synthetic (the executor's own sentence). A sink that receives events
// as they happen calls it with the kernel's flag; Reword with the step's.
func RewordEvent(e *trajectories.Event, synthetic bool) {
	if synthetic {
		e.Observation = reword(e.Observation)
	}
	e.Error = reword(e.Error)
}

// reword returns a sentence that shares no wording with s but is derived
// from it, so the same sentence is reworded the same way in a step and in
// its event. Empty stays empty: absence is not wording.
func reword(s string) string {
	if s == "" {
		return ""
	}
	return fmt.Sprintf("Reworded by this implementation (%08x).", crc32.ChecksumIEEE([]byte(s)))
}
