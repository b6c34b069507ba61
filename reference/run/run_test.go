package run

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/polyloop/polyloop-conform/reference/action"
	"github.com/polyloop/polyloop-conform/reference/assembly"
	"github.com/polyloop/polyloop-conform/reference/events"
	"github.com/polyloop/polyloop-conform/reference/journal"
	"github.com/polyloop/polyloop-conform/reference/tools"
)

func ok(text string) tools.ToolHandler {
	return func(context.Context, map[string]any) (string, error) { return text, nil }
}

func script(outputs ...string) (Model, *int) {
	calls := 0
	return ModelFunc(func(ctx context.Context, in []assembly.Message) (string, error) {
		calls++
		step := 1
		for _, m := range in {
			if m.Role == assembly.RoleAssistant {
				step++
			}
		}
		if step > len(outputs) {
			return "", errors.New("script exhausted")
		}
		return outputs[step-1], nil
	}), &calls
}

func newRequest(t *testing.T, reg *tools.ToolRegistry, b Budget) *Request {
	t.Helper()
	ex, err := reg.Executor()
	if err != nil {
		t.Fatal(err)
	}
	req, err := NewRequest(RequestConfig{Definition: &Definition{}, GoalFragment: "goal", Budget: b, Tools: reg, Executor: ex})
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func TestNewRequest_refusals(t *testing.T) {
	full, _ := tools.NewRegistry(tools.ToolSpec{Name: "a", Handler: ok("a")}, tools.ToolSpec{Name: "b", Handler: ok("b")})
	narrow, _ := full.RestrictTo("a")
	fullEx, _ := full.Executor()
	narrowEx, _ := narrow.Executor()
	def := &Definition{RunFragment: "r"}
	b := Budget{1, 1}
	cases := []struct {
		id   string
		cfg  RequestConfig
		kind string
	}{
		{"0006.D3 mismatch", RequestConfig{Definition: def, Budget: b, Tools: narrow, Executor: fullEx}, KindRegistryMismatch},
		{"0006.D3 narrowed twice is the same registry", RequestConfig{Definition: def, Budget: b, Tools: mustRestrict(full, "a"), Executor: narrowEx}, ""},
		{"0006.D3 project executor beside tools", RequestConfig{Definition: def, Budget: b, Tools: narrow, Executor: ModelExecutor{}}, ""},
		{"0004.D1 zero cap", RequestConfig{Definition: def, Budget: Budget{0, 1}, Tools: narrow, Executor: narrowEx}, KindInvalidBudget},
		{"0010.D4 template", RequestConfig{Definition: &Definition{ObservationTemplate: "no placeholder"}, Budget: b, Tools: narrow, Executor: narrowEx}, KindTemplate},
		{"0010.D5 measure", RequestConfig{Definition: def, Budget: b, Tools: narrow, Executor: narrowEx, Measure: func(bt assembly.BlockType, s string) (int, error) {
			if bt == assembly.BlockInjection {
				return 0, errors.New("no rule")
			}
			return len(s), nil
		}}, KindUnmeasurableBlock},
		{"missing parts", RequestConfig{Budget: b}, KindMissingPart},
	}
	for _, tc := range cases {
		t.Run(tc.id, func(t *testing.T) {
			_, err := NewRequest(tc.cfg)
			var ae *AssemblyError
			switch {
			case tc.kind == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.kind != "" && (!errors.As(err, &ae) || ae.Kind != tc.kind):
				t.Fatalf("err = %v, want assembly error %s", err, tc.kind)
			}
		})
	}
}

// ModelExecutor is a project executor for tests that always executes.
type ModelExecutor struct{}

func (ModelExecutor) Execute(context.Context, action.Action) (tools.ActionOutcome, error) {
	return tools.ActionOutcome{Status: tools.StatusExecuted, Observation: "done"}, nil
}

func mustRestrict(r *tools.ToolRegistry, names ...string) *tools.ToolRegistry {
	n, err := r.RestrictTo(names...)
	if err != nil {
		panic(err)
	}
	return n
}

func TestRun_countersAndHistory_0004_D1_0007_D2(t *testing.T) {
	reg, _ := tools.NewRegistry(tools.ToolSpec{Name: "read", Handler: ok("R")})
	req := newRequest(t, reg, Budget{MaxEffectiveSteps: 5, MaxTotalSteps: 3})
	model, calls := script(
		`{"action":{"tool":"read","arguments":{}}}`,
		`{"action":{"tool":"nope","arguments":{}}}`,
		`garbage`,
	)
	rec := &events.Recorder{}
	res, err := Run(context.Background(), req, Options{Model: model, Sinks: []events.Sink{rec}})
	if err != nil {
		t.Fatal(err)
	}
	if res.End.Reason != TotalBudgetExhausted || res.End.EffectiveSteps != 1 || res.End.TotalSteps != 3 || *calls != 3 {
		t.Fatalf("end = %+v after %d calls", res.End, *calls)
	}
	if got := res.Steps[1].HistoryObservation; got != DefaultNotExecuted {
		t.Errorf("history for an invalid call = %q", got)
	}
	if res.Steps[2].Action.Kind != action.KindNone || res.Steps[2].Outcome.Status != tools.StatusNotExecuted {
		t.Errorf("decision failure step: %+v", res.Steps[2])
	}
	types := []string{}
	for _, e := range rec.Events() {
		types = append(types, e.Type)
	}
	if strings.Join(types, ",") != "run_started,model_step,tool_call,model_step,tool_call,model_step,decision_failed,run_ended" {
		t.Errorf("events = %v", types)
	}
}

func TestRun_cancelDuringModelCall_0004_D4(t *testing.T) {
	reg, _ := tools.NewRegistry(tools.ToolSpec{Name: "read", Handler: ok("R")})
	req := newRequest(t, reg, Budget{5, 5})
	ctx, cancel := context.WithCancel(context.Background())
	model := ModelFunc(func(ctx context.Context, _ []assembly.Message) (string, error) {
		cancel()
		<-ctx.Done()
		return "", ctx.Err()
	})
	dir := t.TempDir()
	res, err := Run(ctx, req, Options{Model: model, JournalDir: dir})
	var in *Interrupted
	if !errors.As(err, &in) || !errors.Is(err, context.Canceled) || !in.Cancelled() {
		t.Fatalf("err = %v, want an *Interrupted wrapping context.Canceled", err)
	}
	if in.Step != 1 || in.During != "model_call" || res == nil || len(res.Steps) != 0 || res.End.Reason != "" {
		t.Errorf("interrupted = %+v, result = %+v", in, res)
	}
	// No end is journalled: the next holder resumes instead of reading a
	// recorded end (0004.D4, 0002.D3).
	contents, err := journal.ReadFile(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range contents.Records {
		if r.Type == journal.TypeRunEnd {
			t.Errorf("a cancelled run journalled its end: %+v", r)
		}
	}
	next, err := Resume(context.Background(), newRequest(t, reg, Budget{5, 5}), Options{JournalDir: dir,
		Model: ModelFunc(func(context.Context, []assembly.Message) (string, error) {
			return `{"action":{"tool":"read","arguments":{}}}`, nil
		})})
	if err != nil || next.End.Reason != EffectiveBudgetExhausted || len(next.Steps) != 5 {
		t.Errorf("resume after cancellation: %+v, %v", next, err)
	}
}

func TestRun_modelErrorIsReturned_0003_D3(t *testing.T) {
	reg, _ := tools.NewRegistry(tools.ToolSpec{Name: "read", Handler: ok("R")})
	req := newRequest(t, reg, Budget{5, 5})
	boom := errors.New("gateway down")
	calls := 0
	res, err := Run(context.Background(), req, Options{Model: ModelFunc(func(context.Context, []assembly.Message) (string, error) { calls++; return "", boom })})
	var in *Interrupted
	if !errors.Is(err, boom) || !errors.As(err, &in) || in.Cancelled() || in.Step != 1 {
		t.Errorf("err = %v, want an *Interrupted wrapping the model's error", err)
	}
	if calls != 1 || res == nil || len(res.Steps) != 0 {
		t.Errorf("calls = %d (the library never retries), result = %+v", calls, res)
	}
}

func TestResume_acrossWriters_0002_D3_D4(t *testing.T) {
	calls := map[string]int{}
	counting := func(name string) tools.ToolHandler {
		return func(context.Context, map[string]any) (string, error) { calls[name]++; return name, nil }
	}
	for _, policy := range []tools.ReplayPolicy{tools.ReplaySafe, tools.ReplayNever} {
		t.Run(string(policy), func(t *testing.T) {
			clear(calls)
			reg, _ := tools.NewRegistry(tools.ToolSpec{Name: "act", ReplayPolicy: policy, Handler: counting("act")},
				tools.ToolSpec{Name: "done", CompletesRun: true, Handler: counting("done")})
			dir := t.TempDir()
			model, _ := script(`{"action":{"tool":"act","arguments":{}}}`, `{"action":{"tool":"done","arguments":{}}}`)
			crash := errors.New("crash")
			hook := func(p journal.Point) error {
				if p.When == journal.Before && p.Record == journal.TypeActionResult && p.Step == 1 {
					return crash
				}
				return nil
			}
			if _, err := Run(context.Background(), newRequest(t, reg, Budget{5, 5}), Options{Model: model, JournalDir: dir, JournalHook: hook}); !errors.Is(err, crash) {
				t.Fatalf("first run: %v", err)
			}
			res, err := Resume(context.Background(), newRequest(t, reg, Budget{5, 5}), Options{Model: model, JournalDir: dir})
			if err != nil {
				t.Fatal(err)
			}
			if policy == tools.ReplaySafe {
				if res.End.Reason != GoalReachedByTool || calls["act"] != 2 || !res.Steps[0].Replayed {
					t.Errorf("SAFE: end %+v, act ran %d times, replayed %v", res.End, calls["act"], res.Steps[0].Replayed)
				}
			} else {
				if res.End.Reason != ResumeOutcomeUnknown || calls["act"] != 1 || res.End.Detail.Tool != "act" || res.End.Detail.Step != 1 {
					t.Errorf("NEVER: end %+v, act ran %d times", res.End, calls["act"])
				}
			}
			// A third process finds the end and calls nothing.
			before := calls["act"] + calls["done"]
			again, err := Resume(context.Background(), newRequest(t, reg, Budget{5, 5}), Options{Model: model, JournalDir: dir})
			if err != nil || again.End.Reason != res.End.Reason || again.End.TotalSteps != res.End.TotalSteps || calls["act"]+calls["done"] != before || again.Resume.From != "run_end" {
				t.Errorf("resume after end: %+v %v", again, err)
			}
		})
	}
}

// counting is the design's assembler that counts its builds.
type counting struct {
	assembly.Standard
	builds *int
}

func (c counting) Build(in assembly.Input, m assembly.Measure) ([]assembly.Message, int, error) {
	*c.builds++
	return c.Standard.Build(in, m)
}

// An assembler other than assembly.Standard lays out every input itself:
// the kernel cannot know it appends a turn the way AppendTurn does.
func TestRun_otherAssemblerBuildsEveryInput(t *testing.T) {
	reg, _ := tools.NewRegistry(tools.ToolSpec{Name: "a", Handler: ok("done")})
	ex, _ := reg.Executor()
	builds := 0
	req, err := NewRequest(RequestConfig{Definition: &Definition{}, GoalFragment: "goal", Budget: Budget{3, 3},
		Tools: reg, Executor: ex, Assembler: counting{builds: &builds}})
	if err != nil {
		t.Fatal(err)
	}
	call := `{"action":{"tool":"a","arguments":{}}}`
	m, calls := script(call, call, call)
	res, err := Run(context.Background(), req, Options{Model: m})
	if err != nil || res.End.Reason != EffectiveBudgetExhausted {
		t.Fatalf("run: %v, %+v", err, res)
	}
	if builds != *calls || builds != 3 {
		t.Errorf("%d builds for %d model calls; want one build per call (3)", builds, *calls)
	}
}
