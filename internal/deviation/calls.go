package deviation

import (
	"context"
	"errors"
	"fmt"
	"maps"

	"github.com/polyloop/polyloop-conform/reference/assembly"
	"github.com/polyloop/polyloop-conform/reference/events"
	"github.com/polyloop/polyloop-conform/reference/run"
	"github.com/polyloop/polyloop-conform/reference/tools"
)

// The wrappers around the model, the handlers, the audit sinks and the
// kernel's entry points.

func model(f func(run.Model) run.Model) func(*run.Options) {
	return func(o *run.Options) { o.Model = f(o.Model) }
}

// retried calls a model that failed once more (0003.D3).
func retried(m run.Model) run.Model {
	return run.ModelFunc(func(ctx context.Context, in []assembly.Message) (string, error) {
		out, err := m.Complete(ctx, in)
		if err != nil && !cancelled(ctx, err) {
			out, err = m.Complete(ctx, in)
		}
		return out, err
	})
}

// settledFirst answers a failed model call with an output that is no
// action, so the kernel settles it as a decision failure step, and gives
// the failure itself on the next call (0003.D3.budget).
func settledFirst(m run.Model) run.Model {
	var failed error
	return run.ModelFunc(func(ctx context.Context, in []assembly.Message) (string, error) {
		if failed != nil {
			return "", failed
		}
		out, err := m.Complete(ctx, in)
		if err != nil && !cancelled(ctx, err) {
			failed = err
			return "", nil
		}
		return out, err
	})
}

// deadlineError is how a port that knows only context.Canceled sees the
// run's deadline passing in a call: an ordinary error of the call.
type deadlineError struct{}

func (deadlineError) Error() string    { return "the call did not finish in time" }
func (deadlineError) TypeName() string { return "DeadlineExceeded" }

func deadlineAsFailure(err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return deadlineError{}
	}
	return err
}

// deadlineIsFailure wraps the model and every handler (0004.D4.deadline).
var deadlineIsFailure = Wrap{
	Options: model(func(m run.Model) run.Model {
		return run.ModelFunc(func(ctx context.Context, in []assembly.Message) (string, error) {
			out, err := m.Complete(ctx, in)
			return out, deadlineAsFailure(err)
		})
	}),
	Specs: handlers(func(_ string, h tools.ToolHandler) tools.ToolHandler {
		return func(ctx context.Context, args map[string]any) (string, error) {
			out, err := h(ctx, args)
			return out, deadlineAsFailure(err)
		}
	}),
}

// handlers wraps the handler of every spec that has one.
func handlers(f func(name string, h tools.ToolHandler) tools.ToolHandler) func([]tools.ToolSpec, *tools.SchemaCache) []tools.ToolSpec {
	return func(specs []tools.ToolSpec, _ *tools.SchemaCache) []tools.ToolSpec {
		out := make([]tools.ToolSpec, len(specs))
		for i, s := range specs {
			if s.Handler != nil {
				s.Handler = f(s.Name, s.Handler)
			}
			out[i] = s
		}
		return out
	}
}

// toolKeyAdded gives the handler the tool's name in its arguments (0008.D3).
func toolKeyAdded(name string, h tools.ToolHandler) tools.ToolHandler {
	return func(ctx context.Context, args map[string]any) (string, error) {
		args = maps.Clone(args)
		args["tool"] = name
		return h(ctx, args)
	}
}

// lazyHandlers gives a spec without a handler one that fails when called,
// so executor() finds none missing (0008.D2).
func lazyHandlers(specs []tools.ToolSpec, _ *tools.SchemaCache) []tools.ToolSpec {
	out := make([]tools.ToolSpec, len(specs))
	for i, s := range specs {
		if s.Handler == nil {
			name := s.Name
			s.Handler = func(context.Context, map[string]any) (string, error) {
				return "", fmt.Errorf("tool %s has no handler", name)
			}
		}
		out[i] = s
	}
	return out
}

func sinks(f func(events.Sink) events.Sink) func(*run.Options) {
	return func(o *run.Options) {
		out := make([]events.Sink, len(o.Sinks))
		for i, k := range o.Sinks {
			out[i] = f(k)
		}
		o.Sinks = out
	}
}

// withoutDecision leaves the repaired decision out of model_step events
// (0011.D1).
func withoutDecision(k events.Sink) events.Sink {
	return events.SinkFunc(func(e events.Event) error {
		if e.Type == events.TypeModelStep {
			e.Decision = nil
		}
		return k.Emit(e)
	})
}

// uncounted hides a sink's failures from the stream that counts them
// (0011.D2.count).
func uncounted(k events.Sink) events.Sink {
	return events.SinkFunc(func(e events.Event) (err error) {
		defer func() {
			if recover() != nil {
				err = nil
			}
		}()
		_ = k.Emit(e) // the deviation: nobody counts the failure
		return nil
	})
}

// sinkFailureStops makes the next model call fail once a sink has failed,
// so the run stops there (0011.D2).
func sinkFailureStops(o *run.Options) {
	var failed error
	sinks(func(k events.Sink) events.Sink {
		return events.SinkFunc(func(e events.Event) (err error) {
			defer func() {
				if r := recover(); r != nil {
					failed = fmt.Errorf("event sink panicked: %v", r)
					panic(r)
				}
			}()
			if err = k.Emit(e); err != nil {
				failed = err
			}
			return err
		})
	})(o)
	model(func(m run.Model) run.Model {
		return run.ModelFunc(func(ctx context.Context, in []assembly.Message) (string, error) {
			if failed != nil {
				return "", fmt.Errorf("event sink failed: %w", failed)
			}
			return m.Complete(ctx, in)
		})
	})(o)
}

// cancelEndsRun ends a cancelled run with reason cancelled instead of
// stopping it resumable (0004.D4).
func cancelEndsRun(k Kernel) Kernel { return interruptEndsRun(k, context.Canceled) }

// interruptEndsRun ends a run interrupted by cause (a cancellation, a
// passed deadline) with reason cancelled, its counters the last step's,
// instead of stopping it resumable.
func interruptEndsRun(k Kernel, cause error) Kernel {
	end := func(entry func(context.Context, *run.Request, run.Options) (*run.Result, error)) func(context.Context, *run.Request, run.Options) (*run.Result, error) {
		return func(ctx context.Context, req *run.Request, opts run.Options) (*run.Result, error) {
			res, err := entry(ctx, req, opts)
			var in *run.Interrupted
			if !errors.As(err, &in) || !errors.Is(in.Err, cause) {
				return res, err
			}
			if res == nil {
				res = &run.Result{}
			}
			var c run.Counters
			if n := len(res.Steps); n > 0 {
				c = res.Steps[n-1].Counters
			}
			res.End = run.End{Reason: "cancelled", EffectiveSteps: c.EffectiveSteps, TotalSteps: c.TotalSteps,
				Detail: &run.EndDetail{Step: in.Step, During: in.During, Tool: in.Tool}}
			return res, nil
		}
	}
	return Kernel{Run: end(k.Run), Resume: end(k.Resume)}
}

// unknownWithoutDetail drops the detail of a resume_outcome_unknown end
// (0002.D4.unknown).
func unknownWithoutDetail(k Kernel) Kernel {
	resume := k.Resume
	k.Resume = func(ctx context.Context, req *run.Request, opts run.Options) (*run.Result, error) {
		res, err := resume(ctx, req, opts)
		if res != nil && res.End.Reason == run.ResumeOutcomeUnknown {
			res.End.Detail = nil
		}
		return res, err
	}
	return k
}

// journalErrorDropsSteps loses the steps settled before a journal write
// error: whatever did not end and was not interrupted shows none (0002.D6).
func journalErrorDropsSteps(k Kernel) Kernel {
	drop := func(entry func(context.Context, *run.Request, run.Options) (*run.Result, error)) func(context.Context, *run.Request, run.Options) (*run.Result, error) {
		return func(ctx context.Context, req *run.Request, opts run.Options) (*run.Result, error) {
			res, err := entry(ctx, req, opts)
			var in *run.Interrupted
			if err != nil && !errors.As(err, &in) {
				return nil, err
			}
			return res, err
		}
	}
	return Kernel{Run: drop(k.Run), Resume: drop(k.Resume)}
}
