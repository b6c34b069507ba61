package refdriver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/polyloop/polyloop-conform/internal/journalfile"
	"github.com/polyloop/polyloop-conform/reference/events"
	"github.com/polyloop/polyloop-conform/reference/journal"
	"github.com/polyloop/polyloop-conform/reference/run"
	"github.com/polyloop/polyloop-conform/trajectories"
)

// resumeIn resumes the single request of sc from its journal in dir,
// building the request afresh as a new process would.
func (sr scenarioRun) resumeIn(ctx context.Context, opts run.Options, dir string, hook journal.Hook) (*run.Result, error) {
	req, err := BuildRequest(sr.sc, sr.def, 0, sr.env, sr.o)
	if err != nil {
		return nil, err
	}
	res, _, err := sr.journaled(dir, 0, true, func(int) journal.Hook { return sr.reporting(hook) })(ctx, 0, req, opts, nil)
	return res, err
}

// pointRecorder is an Env that records the journal points a process
// reports (fakes.Env), as the protocol's journal_point messages do.
type pointRecorder interface {
	Point(when, record string, step int)
}

// reporting tells the Env about every journal point a resumed run passes,
// before hook sees it, so the runner holds the resuming process to what
// it journals in process as over the protocol (0002.D4.one-intent).
func (sr scenarioRun) reporting(hook journal.Hook) journal.Hook {
	pr, ok := sr.env.(pointRecorder)
	if !ok {
		return hook
	}
	return func(p journal.Point) error {
		pr.Point(p.When, p.Record, p.Step)
		if hook == nil {
			return nil
		}
		return hook(p)
	}
}

// stopAndResume runs req with a journal until it stops without an end
// (cancelled, or a failed model call), then resumes that journal with a
// freshly built request and an uncancelled context, as the next holder of
// the run's lease would (0004.D4, 0002.D3).
func (sr scenarioRun) stopAndResume(ctx context.Context, req *run.Request, opts run.Options, rec **events.Recorder) (*run.Result, *trajectories.Resume, error) {
	sc, o := sr.sc, sr.o
	dir, cleanup, err := journalDir(o.JournalRoot, sc.ID)
	if err != nil {
		return nil, nil, err
	}
	defer cleanup()
	first := opts
	first.JournalDir = dir
	res, err := sr.call(ctx, req, first, false)
	var in *run.Interrupted
	if !errors.As(err, &in) {
		if err == nil {
			return nil, nil, fmt.Errorf("the run ended with %s without being interrupted, so there is nothing to resume", res.End.Reason)
		}
		return nil, nil, err
	}
	next, cancel := nextHolder(ctx)
	defer cancel()
	*rec = &events.Recorder{}
	opts.Sinks = sr.sinks(*rec, 0)
	sr.restarted()
	res, err = sr.resumeIn(next, opts, dir, nil)
	if res == nil {
		return res, nil, err
	}
	return res, wireResume(res.Resume), err
}

// nextHolder is the context of the next holder of a run's lease: not
// cancelled with the first holder (its cancellation ended with it), but
// held to the same deadline.
func nextHolder(ctx context.Context) (context.Context, context.CancelFunc) {
	next := context.WithoutCancel(ctx)
	if d, ok := ctx.Deadline(); ok {
		return context.WithDeadline(next, d)
	}
	return next, func() {}
}

// journalDir returns a fresh journal directory for one scenario under root
// (a temporary directory when root is empty) and how to remove it.
func journalDir(root, id string) (string, func(), error) {
	if root == "" {
		tmp, err := os.MkdirTemp("", "polyloop-journal-*")
		if err != nil {
			return "", nil, fmt.Errorf("create journal directory: %w", err)
		}
		return filepath.Join(tmp, id), func() { os.RemoveAll(tmp) }, nil
	}
	return filepath.Join(root, id), func() {}, nil
}

// crashAndResume runs req until the injected crash, optionally tears the
// journal's tail, then resumes with a freshly built request, as a new
// process would.
func (sr scenarioRun) crashAndResume(ctx context.Context, req *run.Request, opts run.Options, rec **events.Recorder) (*run.Result, *trajectories.Resume, error) {
	sc, o := sr.sc, sr.o
	dir, cleanup, err := journalDir(o.JournalRoot, sc.ID)
	if err != nil {
		return nil, nil, err
	}
	defer cleanup()
	inj := o.Crash
	if inj == nil {
		inj = ForSpec(sc.Faults.Crash)
	}
	first := opts
	first.JournalDir, first.JournalHook = dir, inj.Hook
	res, err := sr.call(ctx, req, first, false)
	point, fired := inj.Fired()
	switch {
	case err != nil && !errors.Is(err, ErrCrash):
		return nil, nil, err
	case !fired && o.Crash == nil && sc.Faults.Crash.Unreached:
		// The design writes no record there (0002.D1.no-intent-invalid):
		// the run ends as if no crash had been scripted.
		return res, nil, nil
	case !fired:
		// The run finished before reaching the point: nothing to resume,
		// which the crash-point harness needs to know, and a scenario author too.
		return nil, nil, fmt.Errorf("crash point was never reached; the run ended with %s after %d steps", res.End.Reason, len(res.Steps))
	}
	if err := sr.breakJournal(dir); err != nil {
		return nil, nil, err
	}
	sr.journalPlayed()
	*rec = &events.Recorder{}
	opts.Sinks = sr.sinks(*rec, 0)
	sr.restarted()
	res, point, err = sr.resumeAgain(ctx, opts, dir, rec, point)
	if err != nil {
		return nil, nil, err
	}
	info := wireResume(res.Resume)
	info.CrashPoint = trajectories.CrashPointName(point.When, point.Record, point.Step)
	return res, info, nil
}

func noHook(int) journal.Hook { return nil }

// resumeAgain resumes the journal in dir as the second process does. With
// faults.crash_on_resume (and no crash point of the harness's own) that
// process dies too, at its point, and a third resumes the journal it
// left; point is then the second crash point, the one the last resume
// follows.
func (sr scenarioRun) resumeAgain(ctx context.Context, opts run.Options, dir string, rec **events.Recorder, point journal.Point) (*run.Result, journal.Point, error) {
	spec := sr.sc.Faults.CrashOnResume
	if spec == nil || sr.o.Crash != nil {
		res, err := sr.resumeIn(ctx, opts, dir, nil)
		return res, point, err
	}
	inj := ForSpec(spec)
	res, err := sr.resumeIn(ctx, opts, dir, inj.Hook)
	second, fired := inj.Fired()
	switch {
	case err != nil && !errors.Is(err, ErrCrash):
		return nil, point, err
	case !fired && res == nil:
		return nil, point, errors.New("crash_on_resume point was never reached; the resumed run stopped without an end")
	case !fired:
		return nil, point, fmt.Errorf("crash_on_resume point was never reached; the resumed run ended with %s after %d steps", res.End.Reason, len(res.Steps))
	}
	*rec = &events.Recorder{}
	opts.Sinks = sr.sinks(*rec, 0)
	sr.restarted()
	res, err = sr.resumeIn(ctx, opts, dir, nil)
	return res, second, err
}

// Errnos a journal_error fault may name.
var errnos = map[string]error{"ENOSPC": syscall.ENOSPC, "EACCES": syscall.EACCES, "EIO": syscall.EIO}

func (sr scenarioRun) runWithWriteFault(ctx context.Context, req *run.Request, opts run.Options) (*run.Result, error) {
	f, root := sr.sc.Faults.JournalError, sr.o.JournalRoot
	if root != "" {
		if err := os.MkdirAll(root, 0o755); err != nil {
			return nil, fmt.Errorf("create journal directory: %w", err)
		}
	}
	dir, err := os.MkdirTemp(root, "polyloop-journal-*")
	if err != nil {
		return nil, fmt.Errorf("create journal directory: %w", err)
	}
	defer os.RemoveAll(dir)
	opts.JournalDir = filepath.Join(dir, "run")
	opts.JournalWriteFault = func(p journal.Point) error {
		if p.Record == f.Record && (f.Step == 0 || f.Step == p.Step) {
			return errnos[f.Errno]
		}
		return nil
	}
	return sr.call(ctx, req, opts, false)
}

// TearTail cuts the last record of the reference's journal in dir in
// half (journalfile.Tear).
func TearTail(dir string) error { return journalfile.Tear(filepath.Join(dir, journal.FileName)) }

// DamageJournal damages the reference's journal in dir the way no crash
// does (journalfile.Damage): resume must refuse it (0002.D5).
func DamageJournal(dir, kind string) error {
	return journalfile.Damage(filepath.Join(dir, journal.FileName), kind)
}

// breakJournal tears or damages the journal in dir after the crash, as
// the scenario's faults ask.
func (sr scenarioRun) breakJournal(dir string) error {
	if sr.sc.Faults.TornTail {
		if err := TearTail(dir); err != nil {
			return err
		}
	}
	if kind := sr.sc.Faults.JournalDamage; kind != "" {
		return DamageJournal(dir, kind)
	}
	return nil
}

// journalPlayed tells the runner that the driver cut or damaged the
// journal, if the scenario asked for either.
func (sr scenarioRun) journalPlayed() {
	if (sr.sc.Faults.TornTail || sr.sc.Faults.JournalDamage != "") && sr.o.JournalPlayed != nil {
		sr.o.JournalPlayed()
	}
}
