package protocol

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/polyloop/polyloop-conform/fakes"
	"github.com/polyloop/polyloop-conform/internal/journalfile"
	"github.com/polyloop/polyloop-conform/scenarios"
	"github.com/polyloop/polyloop-conform/trajectories"
)

// journalsMatchPoints holds the journals of an implementation that offers
// journal-lines to the points it reported, every phase's that has written
// one, whenever the process stops: one file in the phase's directory, as
// many whole records as its latest "after" point's seq, each line's
// checksum right, nothing torn (the runner stopped the process at a point,
// between writes). A phase's journal is the record of a run that ended: a
// later phase does not remove it (0002.D1, 0003.D1).
func (x *Exchange) journalsMatchPoints() error {
	for phase, n := range x.lastAfter {
		dir := x.run.JournalDir
		if x.run.Spec.Phased {
			dir = PhaseJournal(dir, phase)
		}
		if err := journalMatches(dir, n); err != nil {
			if x.run.Spec.Phased {
				return fmt.Errorf("phase %d: %w (a phase's journal is the record of its run, kept after the phase ends: 0002.D1, 0003.D1)", phase, err)
			}
			return err
		}
	}
	return nil
}

// tearsHere reports whether the process is killed at the crash point it
// reached. A torn record the runner makes (tearBefore) follows the
// journal's last whole record in its file; before the journal's first
// record there is no file yet, whose name is the implementation's. Then
// the process writes that record whole and is killed after it, where the
// scenario names its crash, and the runner cuts the record in half, as it
// does for any torn tail after a crash (playJournal): the disk holds half
// of the journal's only record either way.
func (x *Exchange) tearsHere(phase *int) bool {
	if !x.tearBefore {
		return true
	}
	dir := x.run.JournalDir
	if x.run.Spec.Phased && phase != nil {
		dir = PhaseJournal(dir, *phase)
	}
	if _, err := journalfile.Find(dir); err == nil {
		return true
	}
	x.crash, x.tearBefore = x.sc.Faults.Crash, false
	return false
}

func journalMatches(dir string, want int) error {
	path, err := journalfile.Find(dir)
	if err != nil {
		return err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read the journal: %w", err)
	}
	whole, torn := journalfile.Lines(data)
	if len(torn) > 0 || len(whole) != want {
		return fmt.Errorf("the journal in journal_dir holds %d whole record(s)%s, but the implementation's journal points said %d were written: journal-lines means one record per line in that file (0002.D1)", len(whole), map[bool]string{true: " and a torn one", false: ""}[len(torn) > 0], want)
	}
	return journalfile.Check(data)
}

// playJournal cuts or damages the journal of an implementation that
// offers journal-lines, as the resume message would otherwise ask it to.
func playJournal(dir string, tear bool, damage string) error {
	path, err := journalfile.Find(dir)
	if err != nil {
		return err
	}
	if tear {
		return journalfile.Tear(path)
	}
	return journalfile.Damage(path, damage)
}

// journalKept checks that a run that journals left its journal where the
// runner said: a journal kept elsewhere (under the scenario's name, say)
// passes a run and only fails a crash exploration, and the next holder,
// given journal_dir, would find nothing (0002.D1, 0002.D3).
func journalKept(dir string) error {
	found := false
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			found = true
			return fs.SkipAll
		}
		return nil
	})
	if !found {
		return fmt.Errorf("the run journals, but journal_dir %s holds no file after it: keep the step journal in the directory the run message names (docs/protocol.md, Crash and resume; 0002.D1)", dir)
	}
	return nil
}

// transplant moves the journal of a run that stopped to a new journal_dir
// before the next process resumes it, so that resume has to read the
// journal it is given: a kernel that keeps its real journal elsewhere,
// keyed by the journal_dir path or the run ID, finds nothing there
// (0002.D1, 0002.D3). handover, when set, fills the new directory instead
// (crash exploration hands over a journal with a torn record, or the
// state a power cut leaves). The new journal_dir is nextDir's where it is
// set (a power-loss run's recorder), else made in volume (the system's
// temporary directory when empty); transplant returns it.
func transplant(volume, killed string, handover func(killed, next string) error, nextDir func() (string, error)) (string, error) {
	var root, next string
	var err error
	if nextDir != nil {
		next, err = nextDir()
		root = filepath.Dir(next)
	} else {
		root, err = os.MkdirTemp(volume, "polyloop-conform-journal-*")
		next = filepath.Join(root, "run")
	}
	if err != nil {
		return "", err
	}
	if handover == nil {
		err = os.Rename(killed, next)
		if errors.Is(err, fs.ErrNotExist) {
			err = nil // killed before the first write: nothing to move
		}
	} else {
		err = handover(killed, next)
	}
	if err != nil {
		os.RemoveAll(root)
		return "", fmt.Errorf("hand the journal over to the resuming process: %w", err)
	}
	return next, nil
}

// appendTorn leaves half of record after the last whole record of the
// journal in dir.
func appendTorn(dir string, record []byte) error {
	path, err := journalfile.Find(dir)
	if err != nil {
		return err
	}
	return journalfile.AppendTorn(path, record)
}

// RunFunc runs a scenario to its end over env, as a Driver's RunWith does.
type RunFunc func(context.Context, *scenarios.Scenario, *fakes.Env, RunOptions) (*trajectories.Trajectory, error)

// TornRecord runs sc uninterrupted through run, over fakes of its own,
// with its journal_dir made in volume (the system's temporary directory
// when empty), and returns record seq of its journal (of the phase the
// crash names): the record a process of the same scenario writes there.
// The runner tears that record, never one whose after point the killed
// process reported (journal-lines, 0002.D5).
func TornRecord(ctx context.Context, sc *scenarios.Scenario, seq int, volume string, run RunFunc) ([]byte, error) {
	plain := *sc
	plain.ID = sc.ID + ".torn-record"
	plain.Faults.Crash, plain.Faults.TornTail, plain.Faults.JournalDamage = nil, false, ""
	root, err := os.MkdirTemp(volume, "polyloop-conform-journal-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(root)
	dir := filepath.Join(root, "run")
	if _, err := run(ctx, &plain, fakes.New(&plain, nil), RunOptions{Points: true, JournalDir: dir}); err != nil {
		return nil, fmt.Errorf("the run that shows the record to tear: %w", err)
	}
	if sc.Request == nil {
		dir = PhaseJournal(dir, sc.FaultPhase())
	}
	path, err := journalfile.Find(dir)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if err := journalfile.Check(data); err != nil {
		return nil, err
	}
	whole, _ := journalfile.Lines(data)
	if seq < 1 || seq > len(whole) {
		return nil, fmt.Errorf("the uninterrupted run journalled %d record(s), none at seq %d to tear", len(whole), seq)
	}
	return whole[seq-1], nil
}
