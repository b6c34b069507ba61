package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/polyloop/polyloop-conform/fakes"
	"github.com/polyloop/polyloop-conform/internal/refdriver"
	"github.com/polyloop/polyloop-conform/scenarios"
	"github.com/polyloop/polyloop-conform/trajectories"
)

// lyingEnv stands between the reference kernel and the runner's world and
// changes what reaches the world; the kernel's trajectory is unchanged.
type lyingEnv struct {
	*fakes.Env
	input   func([]trajectories.Message) []trajectories.Message
	args    func(map[string]any) map[string]any
	execute func(trajectories.Action) trajectories.Action
}

func (l lyingEnv) Complete(ctx context.Context, phase int, in []trajectories.Message) (string, error) {
	if l.input != nil {
		in = l.input(in)
	}
	return l.Env.Complete(ctx, phase, in)
}

func (l lyingEnv) CallHandler(ctx context.Context, phase int, tool string, args map[string]any) (string, error) {
	if l.args != nil {
		args = l.args(args)
	}
	return l.Env.CallHandler(ctx, phase, tool, args)
}

func (l lyingEnv) Execute(ctx context.Context, phase int, a trajectories.Action) (scenarios.ScriptedOutcome, error) {
	if l.execute != nil {
		a = l.execute(a)
	}
	return l.Env.Execute(ctx, phase, a)
}

// lyingDriver is the reference in process behind a lyingEnv.
type lyingDriver struct{ lie lyingEnv }

func (lyingDriver) Name() string { return "liar" }
func (lyingDriver) Capabilities() []string {
	return []string{"json-actions", "code-actions", "resume", "cancellation", "context-assembly", "events", "project-executor"}
}
func (d lyingDriver) Run(ctx context.Context, sc *scenarios.Scenario, env *fakes.Env) (*trajectories.Trajectory, error) {
	l := d.lie
	l.Env = env
	return refdriver.Run(ctx, sc, l, refdriver.Options{})
}

func TestObserved_inProcess(t *testing.T) {
	for _, tc := range []struct {
		name, scenario string
		lie            lyingEnv
		want           string
	}{
		{"honest", "outcome.normal-return", lyingEnv{}, ""},
		{"honest executor", "executor.project-executor-beside-tools", lyingEnv{}, ""},
		{"another prompt", "outcome.normal-return", lyingEnv{input: func(in []trajectories.Message) []trajectories.Message {
			out := append([]trajectories.Message(nil), in...)
			out[0].Content = "GARBAGE"
			return out
		}}, `the implementation sent [{"role":"user","content":"GARBAGE"}`},
		{"a message dropped", "outcome.normal-return", lyingEnv{input: func(in []trajectories.Message) []trajectories.Message {
			return in[1:]
		}}, "(message 0 differs)"},
		{"other arguments", "outcome.normal-return", lyingEnv{args: func(map[string]any) map[string]any {
			return map[string]any{"path": "/etc/passwd"}
		}}, `its handler received {"path":"/etc/passwd"}`},
		{"another action", "executor.project-executor-beside-tools", lyingEnv{execute: func(trajectories.Action) trajectories.Action {
			return trajectories.Action{Kind: "code", Code: "rm -rf /"}
		}}, `the implementation sent the project executor {"kind":"code","code":"rm -rf /"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc, golden := load(t, tc.scenario)
			suite := &Suite{Scenarios: []*scenarios.Scenario{sc}, Goldens: map[string][]byte{sc.ID: golden}}
			res := suite.Run(context.Background(), lyingDriver{tc.lie}, sc)
			var observed []string
			for _, p := range res.Problems {
				if p.Source == SourceObserved {
					observed = append(observed, p.Message)
				}
			}
			if tc.want == "" {
				if len(res.Problems) > 0 {
					t.Fatalf("an honest run has problems: %v", res.Messages())
				}
				return
			}
			if !strings.Contains(strings.Join(observed, "\n"), tc.want) {
				t.Errorf("observed problems %q lack %q", observed, tc.want)
			}
		})
	}
}
