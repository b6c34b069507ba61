package crashpoint

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/polyloop/polyloop-conform/fakes"
	"github.com/polyloop/polyloop-conform/internal/protocol"
	"github.com/polyloop/polyloop-conform/internal/refdriver"
	"github.com/polyloop/polyloop-conform/reference/journal"
	"github.com/polyloop/polyloop-conform/reference/tools"
	"github.com/polyloop/polyloop-conform/scenarios"
	"github.com/polyloop/polyloop-conform/trajectories"
)

// inProcess is a Runner of the reference kernel in this process. A kill
// is the kernel stopped by its journal hook at the point: the journal
// keeps exactly what was written and synced, as after SIGKILL; the
// resume is a new kernel built from the scenario on the same journal,
// over the same fakes, as a new process would be. It lets go test walk
// every crash point of every scenario in seconds; the same exploration
// over the protocol, with real processes, is `polyloop-conform explore`
// (CI runs it for the reference and the Python example).
type inProcess struct{ opts refdriver.Options }

func newInProcess() inProcess {
	return inProcess{refdriver.Options{Schemas: &tools.SchemaCache{}}}
}

func (r inProcess) RunWith(ctx context.Context, sc *scenarios.Scenario, env *fakes.Env, o protocol.RunOptions) (*trajectories.Trajectory, error) {
	root, err := os.MkdirTemp("", "polyloop-crashpoint-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(root)
	dir := filepath.Join(root, "run")
	hook := func(p journal.Point) error {
		pp := p
		if o.OnPoint != nil {
			o.OnPoint(pp)
		}
		if o.CrashAt.Matches(pp.When, pp.Record, pp.Step) {
			return refdriver.ErrCrash
		}
		return nil
	}
	tr, err := refdriver.Process(ctx, sc, env, dir, hook, false, r.opts)
	if o.CrashAt == nil {
		return tr, err
	}
	if !errors.Is(err, refdriver.ErrCrash) {
		return nil, fmt.Errorf("the run did not reach crash point %s:%s:%d (%v)", o.CrashAt.When, o.CrashAt.Record, o.CrashAt.Step, err)
	}
	if o.KillOnly {
		return nil, nil
	}
	// As over the protocol, the resume reads a journal moved elsewhere.
	next := filepath.Join(root, "resumed")
	if o.Handover != nil {
		err = o.Handover(dir, next)
	} else {
		err = os.Rename(dir, next)
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	return refdriver.Process(ctx, sc, env, next, nil, true, r.opts)
}
