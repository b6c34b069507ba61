package engine

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/polyloop/polyloop-conform/fakes"
	"github.com/polyloop/polyloop-conform/internal/refdriver"
	"github.com/polyloop/polyloop-conform/scenarios"
	"github.com/polyloop/polyloop-conform/trajectories"
)

// optionsDriver is the reference in process with the sink and the measure
// it is given: the runner's (honest) or a kernel's own (lying).
type optionsDriver struct {
	weights map[string]int
	options func(env *fakes.Env) refdriver.Options
	after   func(env *fakes.Env) // runs once the kernel returned
}

func (optionsDriver) Name() string { return "options" }
func (optionsDriver) Capabilities() []string {
	return []string{"json-actions", "code-actions", "resume", "cancellation", "context-assembly", "events", "project-executor"}
}
func (d optionsDriver) Run(ctx context.Context, sc *scenarios.Scenario, env *fakes.Env) (*trajectories.Trajectory, error) {
	env.Offer(scenarios.PartSink)
	env.Offer(scenarios.PartMeasure)
	env.Weigh(d.weights)
	o := d.options(env)
	o.Restarted = env.Restarted
	tr, err := refdriver.Run(ctx, sc, env, o)
	if d.after != nil {
		d.after(env)
	}
	return tr, err
}

func honest(env *fakes.Env) refdriver.Options {
	return refdriver.Options{Sink: func(phase int, e trajectories.Event) string { return env.Emit(phase, e) }, Measure: env.Measure}
}

var weights = map[string]int{"run_fragment": 3, "injection": 5, "goal_fragment": 7, "model_output": 2, "observation": 4}

// observedMessages runs a scenario on d against its golden and returns
// every problem's sentence, and the observed ones alone.
func observedMessages(t *testing.T, id string, d Driver) (all, observed string) {
	t.Helper()
	sc, golden := load(t, id)
	suite := &Suite{Scenarios: []*scenarios.Scenario{sc}, Goldens: map[string][]byte{sc.ID: golden}}
	res := suite.Run(context.Background(), d, sc)
	var obs []string
	for _, p := range res.Problems {
		if p.Source == SourceObserved {
			obs = append(obs, p.Message)
		}
	}
	return strings.Join(res.Messages(), "\n"), strings.Join(obs, "\n")
}

// TestObserved_timing: the events arrive with the right content and in
// the right order, but not when they happen.
func TestObserved_timing(t *testing.T) {
	var held []fakes.Call
	buffered := optionsDriver{
		options: func(env *fakes.Env) refdriver.Options {
			held = nil
			o := honest(env)
			o.Sink = func(phase int, e trajectories.Event) string {
				held = append(held, fakes.Call{Phase: phase, Event: &e})
				return ""
			}
			return o
		},
		after: func(env *fakes.Env) {
			for _, c := range held {
				env.Emit(c.Phase, *c.Event)
			}
		},
	}
	for _, tc := range []struct {
		name, scenario string
		d              Driver
		want           string
	}{
		{"honest", "outcome.normal-return", optionsDriver{options: honest}, ""},
		{"honest, weighted measure", "context.size-per-block", optionsDriver{weights: weights, options: honest}, ""},
		{"honest resume", "resume.safe-replayed", optionsDriver{weights: weights, options: honest}, ""},
		{"honest phases", "context.fragments-shared-across-phases", optionsDriver{weights: weights, options: honest}, ""},
		{"honest phased resume", "resume.crash-in-second-phase", optionsDriver{weights: weights, options: honest}, ""},
		{"honest cancel", "cancel.resume-after-safe-tool", optionsDriver{weights: weights, options: honest}, ""},
		{"buffered", "outcome.normal-return", buffered, "before its audit sink received run_started (or run_resumed): events reach the sinks when they happen, not buffered to the end of the run (0011.D1.delivery, 0011.D2)"},
		{"buffered, model event late", "outcome.normal-return", buffered, "the audit sink received the model_step event of step 1 after the implementation sent handler_call"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			all, observed := observedMessages(t, tc.scenario, tc.d)
			if tc.want == "" {
				if all != "" {
					t.Fatalf("an honest run has problems:\n%s", all)
				}
				return
			}
			if !strings.Contains(observed, tc.want) {
				t.Errorf("observed problems lack %q:\n%s", tc.want, observed)
			}
		})
	}
}

// TestObserved_sizes: a kernel that probes the runner's measure once per
// block type and then sizes every block itself reports the default
// measure's numbers, which the runner's weighted measure never gave.
func TestObserved_sizes(t *testing.T) {
	probed := func(env *fakes.Env) refdriver.Options {
		o := honest(env)
		asked := map[string]bool{}
		o.Measure = func(phase int, block, text string) (int, error) {
			if !asked[block] {
				asked[block] = true
				if _, err := env.Measure(phase, block, ""); err != nil {
					return 0, err
				}
			}
			return utf8.RuneCountInString(text), nil
		}
		return o
	}
	counted := func(env *fakes.Env) refdriver.Options {
		o := honest(env)
		o.Measure = func(phase int, block, text string) (int, error) {
			if _, err := env.Measure(phase, block, text); err != nil {
				return 0, err
			}
			return utf8.RuneCountInString(text), nil // asks, and ignores the answer
		}
		return o
	}
	for _, tc := range []struct {
		name string
		d    Driver
		want string
	}{
		{"probes once", optionsDriver{weights: weights, options: probed}, `step 1: message 0 (a run_fragment block, "审核") of the model input was never measured by the runner's size measure before the model call`},
		{"ignores the answers", optionsDriver{weights: weights, options: counted}, "step 1: the trajectory says context_size 7; the runner's size measure answered 37 in all"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, observed := observedMessages(t, "context.size-per-block", tc.d)
			if !strings.Contains(observed, tc.want) {
				t.Errorf("observed problems lack %q:\n%s", tc.want, observed)
			}
		})
	}
}
