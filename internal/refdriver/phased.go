package refdriver

import (
	"context"
	"errors"
	"fmt"

	"github.com/polyloop/polyloop-conform/internal/protocol"
	"github.com/polyloop/polyloop-conform/reference/journal"
	"github.com/polyloop/polyloop-conform/scenarios"
	"github.com/polyloop/polyloop-conform/trajectories"
)

// phasedCrashAndResume is a phased scenario with a crash (or a stop
// without an end and a next holder) in one of its phases, in process: the
// first "process" runs the phases up to that one, journaling each, and
// dies there (or stops); the next resumes that phase's journal and runs
// the phases after it. The trajectory is the second process's, as over
// the protocol: the phases before lived in the process that died.
func (sr scenarioRun) phasedCrashAndResume(ctx context.Context) (*trajectories.Trajectory, error) {
	sc, o := sr.sc, sr.o
	dir, cleanup, err := journalDir(o.JournalRoot, sc.ID)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	target := sc.FaultPhase()
	var inj *CrashInjector
	if sc.Faults.Crash != nil {
		inj = ForSpec(sc.Faults.Crash)
	}
	hookFor := func(i int) journal.Hook {
		if inj != nil && i == target {
			return inj.Hook
		}
		return nil
	}
	first, err := sr.phases(ctx, dir, 0, false, hookFor, target)
	if err != nil && !errors.Is(err, ErrCrash) {
		return nil, err
	}
	if first.AssemblyError != nil {
		return first, nil // refused before anything ran: nothing to resume
	}
	switch {
	case inj != nil:
		point, fired := inj.Fired()
		if !fired {
			return nil, fmt.Errorf("crash point was never reached in phase %s", sc.Phases[target].Name)
		}
		pdir := protocol.PhaseJournal(dir, target)
		if err := sr.breakJournal(pdir); err != nil {
			return nil, err
		}
		sr.journalPlayed()
		sr.restarted()
		tr, err := sr.phases(ctx, dir, target, true, noHook, len(sc.Phases)-1)
		if err == nil && tr.Resume != nil {
			tr.Resume.CrashPoint = trajectories.CrashPointName(point.When, point.Record, point.Step)
		}
		return tr, err
	case first.Interrupted == nil && first.RunError == nil:
		return nil, fmt.Errorf("phase %s ended without stopping, so the next holder has nothing to resume", sc.Phases[target].Name)
	}
	next, cancel := nextHolder(ctx)
	defer cancel()
	sr.restarted()
	return sr.phases(next, dir, target, true, noHook, len(sc.Phases)-1)
}

// phases runs phases from..to of a phased scenario as one process does,
// each journaling under dir, the first of them resumed from its journal
// when resume is set (sequence with the journaled leg).
func (sr scenarioRun) phases(ctx context.Context, dir string, from int, resume bool, hookFor func(int) journal.Hook, to int) (*trajectories.Trajectory, error) {
	return sr.sequence(ctx, from, to, sr.journaled(dir, from, resume, hookFor))
}

// Process runs one process's share of a crash-and-resume scenario: the
// first run (resume false) with a journal in dir and the given hook, or a
// resume of that journal. The crash-point harness calls it in child
// processes that it kills. A request refused at assembly gives the same
// trajectory as Run's, whether the scenario runs in process or behind
// serve-reference with a journal (generate found the difference).
func Process(ctx context.Context, sc *scenarios.Scenario, env Env, dir string, hook journal.Hook, resume bool, o Options) (*trajectories.Trajectory, error) {
	if sc.Request == nil {
		return nil, fmt.Errorf("scenario %s has phases; crash exploration runs single-request scenarios", sc.ID)
	}
	return newRun(sc, env, o).phases(ctx, dir, 0, resume, func(int) journal.Hook { return hook }, 0)
}

// ProcessPhases is Process for a phased scenario: one process's share of
// a crash-and-resume run. Fresh (from < 0), it runs every phase, each
// journaling under dir with hookFor's hook; resuming, it resumes phase
// from's journal and runs the phases after it.
func ProcessPhases(ctx context.Context, sc *scenarios.Scenario, env Env, dir string, hookFor func(phase int) journal.Hook, from int, o Options) (*trajectories.Trajectory, error) {
	sr := newRun(sc, env, o)
	if hookFor == nil {
		hookFor = noHook
	}
	if from < 0 {
		return sr.phases(ctx, dir, 0, false, hookFor, len(sc.Phases)-1)
	}
	return sr.phases(ctx, dir, from, true, hookFor, len(sc.Phases)-1)
}
