package crashpoint

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/polyloop/polyloop-conform/fakes"
	"github.com/polyloop/polyloop-conform/internal/journalfile"
	"github.com/polyloop/polyloop-conform/internal/protocol"
	"github.com/polyloop/polyloop-conform/scenarios"
)

// handover is what the runner does to a killed process's journal before
// the next process resumes it, besides moving it to a new journal_dir.
type handover struct {
	// torn is the record the killed process was about to write, as the
	// uninterrupted run wrote it: half of it is appended.
	torn []byte
	// dir is the torn journal's directory under journal_dir: "" for a
	// single request, the phase's index in a phased scenario.
	dir string
	// decoy is another point of the scenario: before the resume, another
	// process runs the scenario and is killed there, so that the last
	// process the implementation saw die is not the one whose journal is
	// handed over. A kernel that resumes from anything but the journal it
	// is given (its own copy, keyed by the spec) resumes the wrong run.
	decoy *protocol.Point
}

// fill returns the RunOptions.Handover of h, or nil for a plain move.
func (h handover) fill(ctx context.Context, r Runner, sc *scenarios.Scenario) func(killed, next string) error {
	if h.torn == nil && h.decoy == nil {
		return nil
	}
	return func(killed, next string) error {
		if err := os.Rename(killed, next); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if h.decoy != nil {
			// Over fakes of its own: what the decoy does is not the run's.
			d := h.decoy
			_, err := r.RunWith(ctx, sc, fakes.New(sc, nil), protocol.RunOptions{CrashAt: crashAt(sc, *d), KillOnly: true})
			if err != nil && ctx.Err() != nil {
				return err
			}
		}
		if h.torn == nil {
			return nil
		}
		path, err := journalfile.Find(filepath.Join(next, h.dir))
		if err != nil {
			return err
		}
		return journalfile.AppendTorn(path, h.torn)
	}
}

// baselineRecords reads the whole lines of the uninterrupted run's
// journal (of each phase's), held to the journal-lines framing.
func baselineRecords(dir string, phases int) (map[int][][]byte, error) {
	out := map[int][][]byte{}
	for i := range phases {
		d := dir
		if phases > 1 {
			d = protocol.PhaseJournal(dir, i)
		}
		lines, err := journalRecords(d)
		if err != nil {
			return nil, err
		}
		out[i] = lines
	}
	return out, nil
}

func journalRecords(dir string) ([][]byte, error) {
	path, err := journalfile.Find(dir)
	if err != nil {
		return nil, fmt.Errorf("the uninterrupted run's journal: %w", err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if err := journalfile.Check(data); err != nil {
		return nil, fmt.Errorf("the uninterrupted run's journal %s: %w", filepath.Base(path), err)
	}
	whole, _ := journalfile.Lines(data)
	return whole, nil
}

// tornRecord is the record to tear at p: at a point before a record other
// than the first (a journal that holds nothing whole has no tail to keep),
// that record as the uninterrupted run wrote it.
func tornRecord(records map[int][][]byte, p protocol.Point) []byte {
	if p.When != before || p.Seq < 2 || p.Seq > len(records[p.Phase]) {
		return nil
	}
	return records[p.Phase][p.Seq-1]
}

// picks says whether the crash point name of scenario id gets a decoy:
// about one in four, the same ones for the same seed.
func (o Options) picks(id, name string) bool {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d %s %s", o.Seed, id, name)
	return h.Sum64()%4 == 0
}

// decoyPoint is the point after p in the run (before it for the last):
// another point of the same scenario, where a journal differs from p's.
func decoyPoint(points []protocol.Point, p protocol.Point) *protocol.Point {
	for i, q := range points {
		if q == p {
			j := i + 1
			if j == len(points) {
				j = i - 1
			}
			if j < 0 {
				return nil
			}
			d := points[j]
			return &d
		}
	}
	return nil
}
