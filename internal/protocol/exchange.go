package protocol

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/polyloop/polyloop-conform/fakes"
	"github.com/polyloop/polyloop-conform/scenarios"
	"github.com/polyloop/polyloop-conform/trajectories"
)

// RunOptions ask more of a run than its scenario does, for crash
// exploration.
type RunOptions struct {
	// Points asks for journal points; each one passed is given to OnPoint.
	Points  bool
	OnPoint func(Point)
	// CrashAt kills the process at this point instead of the scenario's
	// own crash (Step 0 matches a run-level record).
	CrashAt *scenarios.CrashSpec
	// KillOnly ends the run at the kill: no process resumes it.
	KillOnly bool
	// JournalDir, when set, is the run's journal_dir (the caller makes and
	// removes it); otherwise the runner makes a fresh one.
	JournalDir string
	// Volume, when set, is the directory the runner makes journal_dirs in
	// (a fresh one, and a resume's): the one its isolated processes see
	// (internal/isolate); otherwise the system's temporary directory.
	Volume string
	// Handover fills next, the resumed process's new journal_dir, from
	// killed, the journal_dir of the process that stopped; nil moves it
	// (see transplant).
	Handover func(killed, next string) error
	// NoPoints gives the run a journal_dir without asking for journal
	// points: a run recorded for power loss, judged by the wire alone,
	// so that a kernel cannot behave differently when points are asked.
	NoPoints bool
	// NextDir, when set, names each resumed process's new journal_dir (a
	// path that does not exist yet, in a fresh directory NextDir made and
	// the exchange removes); otherwise one is made under the temporary
	// directory.
	NextDir func() (string, error)
}

// Exchange is one scenario's run over the wire: the run message, the
// answers to the implementation's calls from the scenario's fakes, and
// the checks of what the implementation says against what crossed the
// wire, across the process that runs it and, after a crash or a stop
// without an end, the one that resumes it. The caller owns the processes:
// it hands each one to Run or Resume as a Peer.
type Exchange struct {
	ctx      context.Context // cancelled by the engine when a fake blocks
	wait     context.Context // ends only at the deadline
	env      *fakes.Env
	sc       *scenarios.Scenario
	caps     []string // the implementation's hello
	run      *Message // the run message
	resume   *Message // the resume message, once Resumes says so
	tmp      string   // the journal's temporary directory, "" without one
	moved    []string // the resumed journals' temporary directories (transplant)
	volume   string   // where journal directories are made (RunOptions.Volume)
	handover func(killed, next string) error
	nextDir  func() (string, error)
	// tearBefore: the scenario's torn tail is the runner's to make, the way
	// a crash does (journal-lines): the process dies at the point before
	// the record, and half of that record (torn) follows the journal.
	tearBefore bool
	torn       []byte
	crash      *scenarios.CrashSpec
	// again is faults.crash_on_resume until the first resume arms it: the
	// process that resumes after the first crash dies at it too.
	again    *scenarios.CrashSpec
	killedAt *Point
	id       string // the opaque run ID, which results must name
	phases   int    // how many requests the spec has; calls' phase indexes them
	// cancelled holds the calls the runner cancelled, until the
	// implementation acknowledges them with released.
	cancelled map[int]*fakes.Blocked
	onPoint   func(Point) // sees every journal point passed, if set
	// lastAfter is, per phase, the seq of the latest "after" journal
	// point: how many records that phase's journal holds once the process
	// stops at a point.
	lastAfter map[int]int
	// cancelSent is set once the runner cancelled this process's run.
	cancelSent bool

	mu  sync.Mutex
	err error
}

// NewExchange prepares sc's run for an implementation that claimed caps
// in its hello. ctx is the engine's (cancelled when a fake blocks); wait
// ends the exchange (the deadline, or the runner stopping). Close removes
// the journal directory it may make.
func NewExchange(ctx, wait context.Context, sc *scenarios.Scenario, env *fakes.Env, caps []string, o RunOptions) (*Exchange, error) {
	// The wire carries an opaque run ID, never the scenario's: an
	// implementation cannot tell the suite's scenarios (or generate's
	// cases) from a team's own and answer them differently. The mapping
	// stays with the runner and in the transcript's file name.
	runID := NewRunID()
	run := &Message{Type: TypeRun, ID: runID, Spec: SpecFor(sc)}
	run.Spec.Scenario = runID
	x := &Exchange{ctx: ctx, wait: wait, env: env, sc: sc, caps: caps, run: run, id: runID, phases: len(run.Spec.Requests),
		cancelled: map[int]*fakes.Blocked{}, onPoint: o.OnPoint, handover: o.Handover, volume: o.Volume, nextDir: o.NextDir, lastAfter: map[int]int{}}
	x.playParts()
	explore := o.CrashAt != nil || o.Points || o.NoPoints
	if explore || sc.Faults.Crash != nil || sc.Faults.JournalError != nil || sc.Faults.Resume {
		run.JournalDir = o.JournalDir
		if run.JournalDir == "" {
			dir, err := os.MkdirTemp(o.Volume, "polyloop-conform-journal-*")
			if err != nil {
				return nil, err
			}
			x.tmp = dir
			run.JournalDir = filepath.Join(dir, "run")
		}
		if !x.offers(JournalLines) {
			env.JournalOpaque() // what it holds is the implementation's word
		}
		// A crash kills the process at a point; a journal write fault or
		// a next holder kills nothing, but the points show whether each
		// action's intent was written before the action ran (0002.D1),
		// which the engine checks.
		run.ReportJournalPoints = !o.NoPoints
		switch {
		case explore:
			x.crash = o.CrashAt
		case sc.Faults.TornTail && sc.Faults.Crash != nil && sc.Faults.Crash.When == "after" && x.offers(JournalLines):
			// A crash during a write leaves part of that record: the
			// process dies at the point before it (TearsBefore). Only a
			// crash after the record names the record torn; after a crash
			// before a record, torn_tail cuts the last record written, as
			// the scenario format says and the reference does in process.
			before := *sc.Faults.Crash
			before.When = "before"
			x.crash, x.tearBefore = &before, true
		default:
			x.crash, x.again = sc.Faults.Crash, sc.Faults.CrashOnResume
		}
	}
	env.Reporting(run.ReportJournalPoints)
	return x, nil
}

// playParts takes over the parts of a fault the runner can play: an
// implementation that offers them is not told the fault at all.
func (x *Exchange) playParts() {
	run := x.run
	if x.offers(WireSink) {
		x.env.Offer(scenarios.PartSink)
		run.WireSink = true
		run.Spec.Faults.Sink = ""
	}
	if x.offers(WireMeasure) {
		x.env.Offer(scenarios.PartMeasure)
		x.env.Weigh(measureWeights)
		run.WireMeasure = true
		for i := range run.Spec.Requests {
			run.Spec.Requests[i].MeasureUnknown = nil
		}
	}
}

// offers reports whether the implementation claimed a protocol option.
func (x *Exchange) offers(option string) bool {
	return slices.Contains(x.caps, option)
}

// Close removes the journal's directories.
func (x *Exchange) Close() {
	for _, d := range append([]string{x.tmp}, x.moved...) {
		if d != "" {
			os.RemoveAll(d)
		}
	}
}

// TearsBefore reports whether the runner tears the journal's next record
// after the kill, and that record's seq: the caller finds the record, as
// another process of the scenario writes it, for SetTornRecord.
func (x *Exchange) TearsBefore() (seq int, ok bool) {
	if !x.tearBefore || x.killedAt == nil {
		return 0, false
	}
	return x.killedAt.Seq, true
}

// SetTornRecord gives the record TearsBefore asked for.
func (x *Exchange) SetTornRecord(record []byte) { x.torn = record }

// Run sends the run to p and answers it until its result, or until the
// runner killed p at the crash point (then the trajectory is nil and
// Killed is true). After an error, p is in no state to reuse.
func (x *Exchange) Run(p Peer) (*trajectories.Trajectory, error) {
	if err := p.Send(x.run); err != nil {
		return nil, err
	}
	out, err := x.loop(p)
	if err != nil {
		return nil, err
	}
	if x.offers(JournalLines) && x.run.ReportJournalPoints && x.sc.Faults.JournalError == nil {
		if err := x.journalsMatchPoints(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Killed reports whether the runner killed the process that ran last at
// its crash point (the first, or with faults.crash_on_resume the second).
func (x *Exchange) Killed() bool { return x.killedAt != nil }

// Resumes judges the first process's run (out, nil if it was killed):
// whether a next holder must resume it, or why the run failed. When it
// must, the resume message is ready, the journal cut or damaged where the
// runner plays that itself.
func (x *Exchange) Resumes(out *trajectories.Trajectory) (bool, error) {
	sc := x.sc
	if x.killedAt == nil {
		if out.AssemblyError != nil {
			// The request was refused before anything ran: there is no
			// crash point to reach and nothing to resume, in process as
			// over the protocol.
			return false, nil
		}
		if x.crash != nil && !x.crash.Unreached {
			return false, errors.New("the run finished without reaching the scenario's crash point; check the implementation's journal_point messages")
		}
		if x.run.JournalDir != "" && sc.Faults.JournalError == nil {
			if err := journalKept(x.journalDir()); err != nil {
				return false, err
			}
		}
		if !sc.Faults.Resume {
			return false, nil
		}
		if out.End != nil {
			return false, fmt.Errorf("the run ended (%s) instead of stopping without an end, so the next holder has nothing to resume", out.End.Reason)
		}
	}
	// The first process is dead, or its run stopped without an end: a new
	// process resumes the journal, as the next holder of the run would.
	// Only a kill before the first write leaves nothing to resume from.
	if k := x.killedAt; k != nil && !(k.When == "before" && k.Seq <= 1) {
		if err := journalKept(x.journalDir()); err != nil {
			return false, err
		}
	}
	return true, x.prepareResume()
}

// JournalDir is the journal_dir the last run or resume message named: once
// Resumes said a resume is due, the resuming process's, which the runner
// carries into that process's machine (internal/isolate).
func (x *Exchange) JournalDir() string { return x.journalDir() }

// journalDir is the journal_dir of the process that ran last: the run's,
// or the last resume's.
func (x *Exchange) journalDir() string {
	if x.resume != nil {
		return x.resume.JournalDir
	}
	return x.run.JournalDir
}

// prepareResume builds the resume message and plays the journal's cut or
// damage where the implementation lets the runner do it.
func (x *Exchange) prepareResume() error {
	run, sc := x.run, x.sc
	next, err := transplant(x.volume, x.journalDir(), x.handover, x.nextDir)
	if err != nil {
		return err
	}
	x.moved = append(x.moved, filepath.Dir(next))
	// The resumed process holds another run ID and another journal_dir:
	// nothing the stopped process kept under either can reach it.
	x.id = NewRunID()
	spec := *run.Spec
	spec.Scenario = x.id
	resume := &Message{Type: TypeResume, ID: x.id, Spec: &spec, JournalDir: next, TearTail: sc.Faults.TornTail, Damage: sc.Faults.JournalDamage,
		WireSink: run.WireSink, WireMeasure: run.WireMeasure}
	journal := next
	if run.Spec.Phased {
		// Each phase journals in a directory of its own; the next process
		// resumes the phase the fault named, then runs the ones after it.
		target := sc.FaultPhase()
		if x.crash != nil && x.crash.Phase != "" {
			// Crash exploration names the phase of its own kill.
			for i, r := range sc.Runs() {
				if r.Name == x.crash.Phase {
					target = i
				}
			}
		}
		resume.Phase = &target
		journal = PhaseJournal(next, target)
	}
	x.resume = resume
	if x.tearBefore {
		// Half of the record the killed process was about to write
		// follows its last whole record: no process saw it whole.
		if err := appendTorn(journal, x.torn); err != nil {
			return err
		}
		x.env.JournalPlayed()
		resume.TearTail = false
	}
	if x.offers(JournalLines) && (resume.TearTail || resume.Damage != "") {
		// The runner cuts or damages the journal itself, as a crash (or
		// the disk) would: the implementation is only asked to resume.
		if err := playJournal(journal, resume.TearTail, resume.Damage); err != nil {
			return err
		}
		x.env.JournalPlayed()
		resume.TearTail, resume.Damage = false, ""
	}
	return nil
}

// Resume sends the resume message (after Resumes said so) to p, a new
// process, and answers it until its result; Resumed judges that.
func (x *Exchange) Resume(p Peer) (*trajectories.Trajectory, error) {
	x.env.Restarted()
	x.crash = nil
	if x.again != nil {
		// faults.crash_on_resume: this process dies too, at its point, and
		// Killed and Resumes lead to a third. It reports journal points so
		// the runner can kill it there and check its intents (0002.D1).
		x.crash, x.again, x.killedAt = x.again, nil, nil
		x.resume.ReportJournalPoints = true
	}
	if err := p.Send(x.resume); err != nil {
		return nil, err
	}
	x.cancelSent = false // the next holder's run is not cancelled
	x.env.Reporting(x.resume.ReportJournalPoints)
	// The next holder of the run is not cancelled: the first process's
	// cancellation (faults.cancel) ended with it, as in process, where the
	// resume runs on a context without that cancellation.
	x.ctx = x.wait
	return x.loop(p)
}

// Resumed checks the resumed run's trajectory and names the crash point
// the first process was killed at.
func (x *Exchange) Resumed(out *trajectories.Trajectory) (*trajectories.Trajectory, error) {
	if out.Resume == nil && out.RunError != nil && out.RunError.Kind == "journal_damaged" {
		return out, nil // resume refused the journal: nothing was resumed
	}
	if out.Resume == nil {
		return nil, errors.New("the resumed trajectory has no resume field")
	}
	if x.killedAt != nil {
		when := x.killedAt.When
		if x.tearBefore {
			when = x.sc.Faults.Crash.When // the point the scenario names
		}
		out.Resume.CrashPoint = trajectories.CrashPointName(when, x.killedAt.Record, x.killedAt.Step)
	}
	return out, nil
}

// NewRunID returns an opaque run ID for the wire: "run." and 16 random
// hex digits, unrelated to the scenario it stands for (and shaped like a
// scenario ID, so the schemas that check IDs accept it).
func NewRunID() string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return "run." + hex.EncodeToString(b[:])
}
