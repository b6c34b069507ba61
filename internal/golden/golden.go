// Package golden writes golden trajectories, only when asked, atomically,
// and never dropping recorded fields or steps unless asked twice.
package golden

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/polyloop/polyloop-conform/internal/atomicfile"
	"github.com/polyloop/polyloop-conform/internal/compare"
	"github.com/polyloop/polyloop-conform/scenarios"
	"github.com/polyloop/polyloop-conform/trajectories"
)

// ErrShrink refuses an update that would delete recorded fields or steps.
var ErrShrink = errors.New("the update would delete recorded fields or steps; review the change, then rerun with -allow-shrink to accept it")

// Change describes what an update did to one golden.
type Change struct {
	ID      string
	Created bool
	Diffs   []compare.Difference
}

// Changed reports whether the golden's content changed.
func (c Change) Changed() bool { return c.Created || len(c.Diffs) > 0 }

func (c Change) String() string {
	if c.Created {
		return fmt.Sprintf("golden %s: created", c.ID)
	}
	if len(c.Diffs) == 0 {
		return fmt.Sprintf("golden %s: unchanged", c.ID)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "golden %s: %d fields changed", c.ID, len(c.Diffs))
	for _, d := range c.Diffs {
		fmt.Fprintf(&b, "\n  %s", d)
	}
	return b.String()
}

// Write stores tr as dir/<id>.json. The ID is checked before any path is
// built, so a hostile ID cannot escape dir.
func Write(dir string, tr *trajectories.Trajectory, allowShrink bool) (Change, error) {
	id := tr.Scenario
	if !scenarios.IDPattern.MatchString(id) {
		return Change{}, fmt.Errorf("refusing to write a golden for scenario id %q: ids are lower-case dotted words with no path separators", id)
	}
	path := filepath.Join(dir, id+".json")
	data, err := trajectories.Marshal(tr)
	if err != nil {
		return Change{}, err
	}
	ch := Change{ID: id}
	old, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		ch.Created = true
	case err != nil:
		return Change{}, fmt.Errorf("read golden %s: %w", path, err)
	default:
		_, want, perr := trajectories.Parse(path, old)
		if perr == nil {
			_, got, _ := trajectories.Parse(path, data)
			ch.Diffs, _ = compare.Diff(want, got, compare.Options{})
			for _, d := range ch.Diffs {
				if d.GotMissing && !allowShrink {
					return ch, fmt.Errorf("golden %s: %s: %w", id, d, ErrShrink)
				}
			}
		} else {
			// An unreadable old golden is replaced; say so in the change.
			ch.Diffs = []compare.Difference{{Path: "", Want: "unreadable golden: " + perr.Error(), Got: "regenerated"}}
		}
	}
	if !ch.Changed() {
		return ch, nil
	}
	return ch, atomicfile.Write(path, data)
}
