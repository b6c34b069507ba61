package tools_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/polyloop/polyloop-conform/reference/action"
	"github.com/polyloop/polyloop-conform/reference/tools"
)

type valueError struct{ msg string }

func (e *valueError) Error() string    { return e.msg }
func (e *valueError) TypeName() string { return "ValueError" }

type plainError struct{}

func (plainError) Error() string { return "plain failure" }

var objSchema = map[string]any{
	"type":       "object",
	"properties": map[string]any{"n": map[string]any{"type": "integer"}},
	"required":   []any{"n"},
}

func call(tool string, args map[string]any) action.Action {
	return action.Action{Kind: action.KindToolCall, Tool: tool, Arguments: args, HasArgs: args != nil}
}

func TestExecuteTable_0008_D4(t *testing.T) {
	cases := []struct {
		id      string
		handler tools.ToolHandler
		act     action.Action
		want    tools.ActionOutcome
		called  bool
	}{
		{
			id:      "0008.D4.no-tool-call",
			handler: func(context.Context, map[string]any) (string, error) { return "x", nil },
			act:     action.Action{Kind: action.KindCode, Code: "print(1)"},
			want:    tools.ActionOutcome{Status: tools.StatusNotExecuted, Observation: tools.SentenceNoToolCall, ObservationIsSynthetic: true},
		},
		{
			id:      "0008.D4.validate/unknown-tool",
			handler: func(context.Context, map[string]any) (string, error) { return "x", nil },
			act:     call("nope", map[string]any{"n": 1}),
			want:    tools.ActionOutcome{Status: tools.StatusNotExecuted, Observation: `tool "nope" does not exist`, ObservationIsSynthetic: true},
		},
		{
			id:      "0008.D4.validate/schema",
			handler: func(context.Context, map[string]any) (string, error) { return "x", nil },
			act:     call("count", map[string]any{"n": "3"}),
			want: tools.ActionOutcome{Status: tools.StatusNotExecuted, ObservationIsSynthetic: true,
				Observation: `arguments for tool "count" do not match its schema: at /n: got string, want integer`},
		},
		{
			id: "0008.D4.env-error",
			handler: func(context.Context, map[string]any) (string, error) {
				return "", &tools.ToolEnvironmentError{Message: "disk gone"}
			},
			act:    call("count", map[string]any{"n": 1}),
			want:   tools.ActionOutcome{Status: tools.StatusEnvError, Observation: "disk gone"},
			called: true,
		},
		{
			id:      "0008.D4.handler-error/panic-with-a-string",
			handler: func(context.Context, map[string]any) (string, error) { panic("boom") },
			act:     call("count", map[string]any{"n": 1}),
			want:    tools.ActionOutcome{Status: tools.StatusExecuted, Observation: "panic: boom"},
			called:  true,
		},
		{
			id: "0008.D4.handler-error/panic-with-an-environment-error",
			handler: func(context.Context, map[string]any) (string, error) {
				panic(&tools.ToolEnvironmentError{Message: "disk gone"})
			},
			act:    call("count", map[string]any{"n": 1}),
			want:   tools.ActionOutcome{Status: tools.StatusExecuted, Observation: "ToolEnvironmentError: disk gone"},
			called: true,
		},
		{
			id: "0008.D4.env-error/wrapped",
			handler: func(context.Context, map[string]any) (string, error) {
				return "", fmt.Errorf("ctx: %w", &tools.ToolEnvironmentError{Message: "disk gone"})
			},
			act:    call("count", map[string]any{"n": 1}),
			want:   tools.ActionOutcome{Status: tools.StatusEnvError, Observation: "disk gone"},
			called: true,
		},
		{
			id:      "0008.D4.handler-error/named",
			handler: func(context.Context, map[string]any) (string, error) { return "", &valueError{"bad n"} },
			act:     call("count", map[string]any{"n": 1}),
			want:    tools.ActionOutcome{Status: tools.StatusExecuted, Observation: "ValueError: bad n"},
			called:  true,
		},
		{
			id:      "0008.D4.handler-error/go-type",
			handler: func(context.Context, map[string]any) (string, error) { return "", plainError{} },
			act:     call("count", map[string]any{"n": 1}),
			want:    tools.ActionOutcome{Status: tools.StatusExecuted, Observation: "plainError: plain failure"},
			called:  true,
		},
		{
			id:      "0008.D4.normal-return",
			handler: func(_ context.Context, a map[string]any) (string, error) { return fmt.Sprintf("n=%v", a["n"]), nil },
			act:     call("count", map[string]any{"n": 7}),
			want:    tools.ActionOutcome{Status: tools.StatusExecuted, Observation: "n=7"},
			called:  true,
		},
	}
	for _, tc := range cases {
		t.Run(tc.id, func(t *testing.T) {
			called := false
			h := func(ctx context.Context, a map[string]any) (string, error) {
				called = true
				return tc.handler(ctx, a)
			}
			reg, err := tools.NewRegistry(tools.ToolSpec{Name: "count", Parameters: objSchema, Handler: h})
			if err != nil {
				t.Fatal(err)
			}
			ex, err := reg.Executor()
			if err != nil {
				t.Fatal(err)
			}
			got, err := ex.Execute(context.Background(), tc.act)
			if err != nil {
				t.Fatalf("Execute: %v", err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("outcome (-want +got):\n%s", d)
			}
			// 0008.D4.constants: the derived executor never reports completion or truncation.
			if got.EnvReportedCompletion || got.ObservationTruncatedChars != 0 {
				t.Errorf("0008.D4.constants broken: %+v", got)
			}
			if called != tc.called {
				t.Errorf("handler called = %v, want %v", called, tc.called)
			}
		})
	}
}

func TestExecute_0008_D4_cancelled_passesThrough(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	h := func(ctx context.Context, _ map[string]any) (string, error) {
		cancel()
		<-ctx.Done()
		return "", ctx.Err()
	}
	reg, _ := tools.NewRegistry(tools.ToolSpec{Name: "wait", Handler: h})
	ex, _ := reg.Executor()
	out, err := ex.Execute(ctx, call("wait", map[string]any{}))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled unchanged", err)
	}
	if out != (tools.ActionOutcome{}) {
		t.Errorf("a cancelled call produced an outcome: %+v", out)
	}
}

func TestValidate_0008_D4_validate_noCoercion(t *testing.T) {
	reg, _ := tools.NewRegistry(tools.ToolSpec{Name: "count", Parameters: objSchema})
	a, err := action.ParseJSON(`{"action":{"tool":"count","arguments":{"n":3.0}}}`)
	if err != nil {
		t.Fatal(err)
	}
	// 3.0 is an integer in JSON Schema's sense; "3" is not and must not be coerced.
	if err := reg.Validate(a); err != nil {
		t.Errorf("3.0 refused: %v", err)
	}
	a, _ = action.ParseJSON(`{"action":{"tool":"count","arguments":{"n":"3"}}}`)
	if err := reg.Validate(a); err == nil {
		t.Error(`"3" accepted for an integer: the validator coerced a string`)
	}
	a, _ = action.ParseJSON(`{"action":{"tool":"count"}}`)
	var ve *tools.ValidationError
	if err := reg.Validate(a); !errors.As(err, &ve) || ve.Kind != "missing_arguments" {
		t.Errorf("bare tool name: err = %v, want missing_arguments", err)
	}
}

func TestNewRegistry_0006_D6_constructionErrors(t *testing.T) {
	_, err := tools.NewRegistry(tools.ToolSpec{Name: "a"}, tools.ToolSpec{Name: "b"}, tools.ToolSpec{Name: "a"})
	var re *tools.RegistryError
	if !errors.As(err, &re) || re.Kind != "duplicate_tool" || !cmp.Equal(re.Tools, []string{"a"}) {
		t.Errorf("duplicate: err = %v", err)
	}
	_, err = tools.NewRegistry(tools.ToolSpec{Name: "bad", Parameters: map[string]any{"type": 12}})
	if !errors.As(err, &re) || re.Kind != "invalid_schema" {
		t.Errorf("bad schema: err = %v", err)
	}
}

func TestNewRegistry_0006_D6_construction_all(t *testing.T) {
	var re *tools.RegistryError
	_, err := tools.NewRegistry(tools.ToolSpec{Name: "b"}, tools.ToolSpec{Name: "a"}, tools.ToolSpec{Name: "b"}, tools.ToolSpec{Name: "a"}, tools.ToolSpec{Name: "b"})
	if !errors.As(err, &re) || re.Kind != "duplicate_tool" || !cmp.Equal(re.Tools, []string{"a", "b"}) {
		t.Errorf("duplicates: err = %v, want duplicate_tool naming a and b once each", err)
	}
	ref := map[string]any{"$ref": "#/$defs/missing"}
	_, err = tools.NewRegistry(tools.ToolSpec{Name: "z", Parameters: ref}, tools.ToolSpec{Name: "ok"}, tools.ToolSpec{Name: "m", Parameters: map[string]any{"type": "integr"}})
	if !errors.As(err, &re) || re.Kind != "invalid_schema" || !cmp.Equal(re.Tools, []string{"m", "z"}) {
		t.Errorf("broken schemas: err = %v, want invalid_schema naming m and z", err)
	}
}

func TestRestrictTo_0008_D1_handlersTravel(t *testing.T) {
	h := func(context.Context, map[string]any) (string, error) { return "ok", nil }
	full, _ := tools.NewRegistry(
		tools.ToolSpec{Name: "read", Handler: h},
		tools.ToolSpec{Name: "write"},
		tools.ToolSpec{Name: "grep", Handler: h},
	)
	narrow, err := full.RestrictTo("grep", "read")
	if err != nil {
		t.Fatal(err)
	}
	if got := narrow.Names(); !cmp.Equal(got, []string{"read", "grep"}) {
		t.Errorf("narrow names = %v, want registration order [read grep]", got)
	}
	if got := full.Names(); len(got) != 3 {
		t.Errorf("original changed: %v", got)
	}
	ex, err := narrow.Executor()
	if err != nil {
		t.Fatalf("0008.D1: handlers did not travel with their specs: %v", err)
	}
	out, err := ex.Execute(context.Background(), call("read", map[string]any{}))
	if err != nil || out.Observation != "ok" {
		t.Errorf("narrow dispatch: %+v %v", out, err)
	}
	if _, err := full.RestrictTo("read", "nope", "also"); err == nil || !strings.Contains(err.Error(), `"also", "nope"`) {
		t.Errorf("unknown names: err = %v", err)
	}
	again, _ := full.RestrictTo("read", "grep")
	if !narrow.SameTools(again) || narrow.SameTools(full) {
		t.Error("SameTools does not tell narrowed registries apart")
	}
}

func TestExecutor_0008_D2_namesEveryMissingHandler(t *testing.T) {
	reg, _ := tools.NewRegistry(tools.ToolSpec{Name: "zeta"}, tools.ToolSpec{Name: "alpha"}, tools.ToolSpec{Name: "mid", Handler: func(context.Context, map[string]any) (string, error) { return "", nil }})
	_, err := reg.Executor()
	var me *tools.MissingHandlersError
	if !errors.As(err, &me) {
		t.Fatalf("err = %v, want MissingHandlersError", err)
	}
	if !cmp.Equal(me.Tools, []string{"alpha", "zeta"}) {
		t.Errorf("tools = %v, want sorted [alpha zeta]", me.Tools)
	}
	for _, want := range []string{"alpha, zeta", "RestrictTo", "Handler"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err.Error(), want)
		}
	}
}

func TestSchemaForModel_0006_D6(t *testing.T) {
	reg, _ := tools.NewRegistry(tools.ToolSpec{Name: "count", Description: "counts", Parameters: objSchema})
	got := reg.SchemaForModel()
	if len(got) != 1 || got[0].Name != "count" || got[0].Description != "counts" || !cmp.Equal(got[0].Parameters, objSchema) {
		t.Errorf("SchemaForModel = %+v", got)
	}
	if s, ok := reg.Lookup("count"); !ok || s.Replay() != tools.ReplayNever {
		t.Errorf("Lookup/default replay: %+v %v", s, ok)
	}
}

// TestNewRegistry_0006_D6_keywords_inPointerOrder: a schema with several
// uses outside the admitted keywords names each, in the order of their
// JSON pointers, whatever order the schema's map yields them in, so one
// schema always gets one message.
func TestNewRegistry_0006_D6_keywords_inPointerOrder(t *testing.T) {
	params := map[string]any{
		"type":       "object",
		"then":       map[string]any{"required": []any{"fee"}},
		"if":         map[string]any{"properties": map[string]any{"express": map[string]any{"const": true}}},
		"properties": map[string]any{"tags": map[string]any{"type": "array", "uniqueItems": true}},
	}
	_, err := tools.NewRegistry(tools.ToolSpec{Name: "ship", Parameters: params})
	if err == nil {
		t.Fatal("a schema using if, then and uniqueItems compiled")
	}
	msg := err.Error()
	at := func(ptr string) int {
		i := strings.Index(msg, "at "+ptr+": keyword")
		if i < 0 {
			t.Fatalf("the message does not name %s:\n%s", ptr, msg)
		}
		return i
	}
	if !(at("/if") < at("/properties/tags/uniqueItems") && at("/properties/tags/uniqueItems") < at("/then")) {
		t.Errorf("keyword uses out of pointer order:\n%s", msg)
	}
}

// 0006.D6.restrict-unknown: an unknown name given twice is named once, and
// names are compared exactly (Read is not read) and sorted by bytes.
func TestRestrictTo_0006_D6_restrictUnknownOnceExact(t *testing.T) {
	full, _ := tools.NewRegistry(tools.ToolSpec{Name: "read"})
	_, err := full.RestrictTo("read", "bash", "bash", "Read", "\U0001F600", "\uFF5E")
	var re *tools.RegistryError
	if !errors.As(err, &re) {
		t.Fatalf("err = %v, want a RegistryError", err)
	}
	if want := []string{"Read", "bash", "\uFF5E", "\U0001F600"}; !cmp.Equal(re.Tools, want) {
		t.Errorf("unknown names = %q, want %q", re.Tools, want)
	}
}
