package refdriver

import (
	"context"
	"errors"
	"fmt"

	"github.com/polyloop/polyloop-conform/internal/protocol"
	"github.com/polyloop/polyloop-conform/reference/events"
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
		if sc.Faults.TornTail {
			if err := TearTail(pdir); err != nil {
				return nil, err
			}
		}
		if sc.Faults.JournalDamage != "" {
			if err := DamageJournal(pdir, sc.Faults.JournalDamage); err != nil {
				return nil, err
			}
		}
		sr.journalPlayed()
		sr.restarted()
		tr, err := sr.phases(ctx, dir, target, true, func(int) journal.Hook { return nil }, len(sc.Phases)-1)
		if err == nil && tr.Resume != nil {
			tr.Resume.CrashPoint = trajectories.CrashPointName(point.When(), point.Type, point.Step)
		}
		return tr, err
	case first.Interrupted == nil && first.RunError == nil:
		return nil, fmt.Errorf("phase %s ended without stopping, so the next holder has nothing to resume", sc.Phases[target].Name)
	}
	next, cancel := nextHolder(ctx)
	defer cancel()
	sr.restarted()
	return sr.phases(next, dir, target, true, func(int) journal.Hook { return nil }, len(sc.Phases)-1)
}

// phases runs phases from..to of a phased scenario as one process does,
// each journaling under dir (protocol.PhaseJournal), the first of them resumed
// from its journal when resume is set; hookFor gives each phase's journal
// hook. It stops at a phase that does not end. A crash injected by a hook
// comes back as ErrCrash with the trajectory so far.
func (sr scenarioRun) phases(ctx context.Context, dir string, from int, resume bool, hookFor func(int) journal.Hook, to int) (*trajectories.Trajectory, error) {
	sc := sr.sc
	tr := &trajectories.Trajectory{Format: trajectories.Format, Scenario: sc.ID}
	for i := from; i <= to && i < len(sc.Phases); i++ {
		req, err := BuildRequest(sc, sr.def, i, sr.env, sr.o)
		if err != nil {
			if tr.AssemblyError = refusal(err); tr.AssemblyError == nil {
				return nil, err
			}
			return tr, nil
		}
		rec := &events.Recorder{}
		opts := sr.options(rec, i)
		opts.JournalDir, opts.JournalHook, opts.JournalFS = protocol.PhaseJournal(dir, i), hookFor(i), sr.o.JournalFS
		res, err := sr.call(ctx, req, opts, resume && i == from)
		if errors.Is(err, ErrCrash) {
			return tr, err
		}
		ended, serr := settle(tr, sc.Phases[i].Name, true, res, err, rec.Events())
		if serr != nil {
			return nil, serr
		}
		if resume && i == from && res != nil {
			tr.Resume = wireResume(res.Resume)
		}
		if !ended {
			return tr, nil
		}
		tr.Phases = append(tr.Phases, trajectories.PhaseEnd{Name: sc.Phases[i].Name, End: *tr.End})
	}
	return tr, nil
}

// ProcessPhases is Process for a phased scenario: one process's share of
// a crash-and-resume run. Fresh (from < 0), it runs every phase, each
// journaling under dir with hookFor's hook; resuming, it resumes phase
// from's journal and runs the phases after it.
func ProcessPhases(ctx context.Context, sc *scenarios.Scenario, env Env, dir string, hookFor func(phase int) journal.Hook, from int, o Options) (*trajectories.Trajectory, error) {
	sr := newRun(sc, env, o)
	if hookFor == nil {
		hookFor = func(int) journal.Hook { return nil }
	}
	if from < 0 {
		return sr.phases(ctx, dir, 0, false, hookFor, len(sc.Phases)-1)
	}
	return sr.phases(ctx, dir, from, true, hookFor, len(sc.Phases)-1)
}
