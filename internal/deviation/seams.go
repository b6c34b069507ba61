package deviation

import (
	"context"
	"errors"

	"github.com/polyloop/polyloop-conform/reference/run"
	"github.com/polyloop/polyloop-conform/reference/tools"
)

// Wrap is how one deviation departs from the design: each field wraps one
// seam of a run, taking the design's part and returning the deviant one.
// A driver builds a run from a scenario through these seams (Seams); an
// unset field leaves its seam alone.
type Wrap struct {
	// Specs changes the tool specs before the registry is built.
	Specs func(specs []tools.ToolSpec, cache *tools.SchemaCache) []tools.ToolSpec
	// Restrict changes the names restrict_to is given.
	Restrict func(full *tools.ToolRegistry, names []string) []string
	// Visible changes the registry restrict_to returned.
	Visible func(visible *tools.ToolRegistry, cache *tools.SchemaCache) (*tools.ToolRegistry, error)
	// Refusal changes the visible registry's refusal to derive an executor.
	Refusal func(err error) error
	// Request changes a request's configuration before it is checked;
	// first holds the first request's budget and goal in a phased
	// scenario (the request itself otherwise).
	Request func(c *run.RequestConfig, first run.RequestConfig) error
	// Options changes the collaborators of one call of the kernel.
	Options func(o *run.Options)
	// Kernel wraps the kernel's entry points.
	Kernel func(Kernel) Kernel
	// Abandon leaves a cancelled call unreleased: whoever plays the
	// model and the handlers must not see its cancellation
	// (0004.D4.release).
	Abandon bool
	// SinkCountPerPhase counts sink failures afresh in each phase, so
	// the trajectory shows the last phase's count (0011.D2.count.phases).
	SinkCountPerPhase bool
	// RefusalClearsEnd leaves end null beside a later phase's refusal
	// (0003.D1.end).
	RefusalClearsEnd bool
}

// Kernel is the kernel's two entry points.
type Kernel struct {
	Run    func(ctx context.Context, req *run.Request, opts run.Options) (*run.Result, error)
	Resume func(ctx context.Context, req *run.Request, opts run.Options) (*run.Result, error)
}

// Design is the kernel as the design has it.
func Design() Kernel { return Kernel{Run: run.Run, Resume: run.Resume} }

// Seams are the seams of a run with a Set's deviations applied, in the
// table's order. The zero Seams (an empty Set's) change nothing.
type Seams struct {
	wraps []Wrap
}

// Seams returns the seams with the deviations of s turned on.
// The design's own run (no deviation on) is the common case, one per
// scenario over the protocol, so it returns at once instead of building
// the whole table to find nothing in it.
func (s Set) Seams() Seams {
	var out Seams
	if !s.any() {
		return out
	}
	for _, d := range All() {
		if s.On(d.Name) {
			out.wraps = append(out.wraps, d.wrap)
		}
	}
	return out
}

// any reports whether some deviation of s is turned on.
func (s Set) any() bool {
	for _, on := range s {
		if on {
			return true
		}
	}
	return false
}

// Specs applies the deviations to the specs of a registry.
func (s Seams) Specs(specs []tools.ToolSpec, cache *tools.SchemaCache) []tools.ToolSpec {
	for _, w := range s.wraps {
		if w.Specs != nil {
			specs = w.Specs(specs, cache)
		}
	}
	return specs
}

// Restrict applies the deviations to the names given to restrict_to.
func (s Seams) Restrict(full *tools.ToolRegistry, names []string) []string {
	for _, w := range s.wraps {
		if w.Restrict != nil {
			names = w.Restrict(full, names)
		}
	}
	return names
}

// Visible applies the deviations to a restricted registry.
func (s Seams) Visible(visible *tools.ToolRegistry, cache *tools.SchemaCache) (*tools.ToolRegistry, error) {
	for _, w := range s.wraps {
		if w.Visible != nil {
			var err error
			if visible, err = w.Visible(visible, cache); err != nil {
				return nil, err
			}
		}
	}
	return visible, nil
}

// Refusal applies the deviations to a refusal to derive an executor.
func (s Seams) Refusal(err error) error {
	for _, w := range s.wraps {
		if w.Refusal != nil {
			err = w.Refusal(err)
		}
	}
	return err
}

// Request applies the deviations to a request's configuration.
func (s Seams) Request(c *run.RequestConfig, first run.RequestConfig) error {
	for _, w := range s.wraps {
		if w.Request != nil {
			if err := w.Request(c, first); err != nil {
				return err
			}
		}
	}
	return nil
}

// Options applies the deviations to one kernel call's collaborators.
func (s Seams) Options(o *run.Options) {
	for _, w := range s.wraps {
		if w.Options != nil {
			w.Options(o)
		}
	}
}

// Kernel is the kernel's entry points with the deviations applied.
func (s Seams) Kernel() Kernel {
	k := Design()
	for _, w := range s.wraps {
		if w.Kernel != nil {
			k = w.Kernel(k)
		}
	}
	return k
}

// Abandon reports whether cancelled calls are left unreleased.
func (s Seams) Abandon() bool {
	for _, w := range s.wraps {
		if w.Abandon {
			return true
		}
	}
	return false
}

// cancelled reports whether err is ctx's cancellation, as the kernel
// tells a cancelled call from a failed one.
func cancelled(ctx context.Context, err error) bool {
	return ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded))
}

// RefusalClearsEnd reports whether a later phase's refusal clears the
// end of the phase before it.
func (s Seams) RefusalClearsEnd() bool {
	for _, w := range s.wraps {
		if w.RefusalClearsEnd {
			return true
		}
	}
	return false
}

// SinkCountPerPhase reports whether sink failures are counted afresh in
// each phase.
func (s Seams) SinkCountPerPhase() bool {
	for _, w := range s.wraps {
		if w.SinkCountPerPhase {
			return true
		}
	}
	return false
}
