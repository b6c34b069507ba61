package fakes

import (
	"context"
	"errors"
	"testing"

	"github.com/polyloop/polyloop-conform/scenarios"
	"github.com/polyloop/polyloop-conform/trajectories"
)

func text(s string) *string { return &s }

func scenario() *scenarios.Scenario {
	return &scenarios.Scenario{
		ID: "fakes.test",
		Tools: []scenarios.Tool{
			{Name: "seq", Handler: scenarios.Behaviours{{Error: &scenarios.NamedError{Type: "ValueError", Message: "first"}}, {Return: text("then")}}},
			{Name: "env", Handler: scenarios.Behaviours{{EnvError: text("down")}}},
			{Name: "wait", Handler: scenarios.Behaviours{{Block: true}}},
			{Name: "bare"},
		},
		Request: &scenarios.Request{Model: []scenarios.ModelTurn{{Output: "one"}, {Block: true}}},
	}
}

func TestHandlersFollowTheirScript(t *testing.T) {
	e := New(scenario(), nil)
	ctx := context.Background()
	_, err := e.CallHandler(ctx, 0, "seq", map[string]any{})
	var named *NamedError
	if !errors.As(err, &named) || named.TypeName() != "ValueError" {
		t.Fatalf("first call: %v", err)
	}
	for i := 0; i < 2; i++ { // the last behaviour repeats
		if out, err := e.CallHandler(ctx, 0, "seq", nil); err != nil || out != "then" {
			t.Fatalf("call %d: %q %v", i+2, out, err)
		}
	}
	var envErr *EnvError
	if _, err := e.CallHandler(ctx, 0, "env", nil); !errors.As(err, &envErr) {
		t.Errorf("env_error: %v", err)
	}
	if e.HasHandler("bare") {
		t.Error("a tool without behaviours got a handler")
	}
	if n := len(e.Snapshot().HandlerCalls); n != 4 {
		t.Errorf("recorded %d calls, want 4", n)
	}
}

func TestBlockUntilCancelledAndRelease(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	blocked := 0
	e := New(scenario(), func() { blocked++; cancel() })
	if !e.HandlerBlocks(0, "wait") || e.HandlerBlocks(0, "seq") {
		t.Error("HandlerBlocks wrong")
	}
	_, err := e.CallHandler(ctx, 0, "wait", nil)
	if !errors.Is(err, context.Canceled) || blocked != 1 {
		t.Fatalf("err %v, blocked %d", err, blocked)
	}
	// Whoever sees the call released says so; until then it is not.
	if calls := e.Snapshot().HandlerCalls; calls[0].Released {
		t.Error("the fake marked its own call released")
	}
	var b *Blocked
	if !errors.As(err, &b) {
		t.Fatalf("err %T, want *Blocked", err)
	}
	b.Release()
	b.Release()
	if calls := e.Snapshot().HandlerCalls; !calls[0].Released {
		t.Error("the released handler was not marked released")
	}
}

func TestModelAnswersByStep(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	e := New(scenario(), cancel)
	in := []trajectories.Message{{Role: "user", Content: "goal"}}
	if out, err := e.Complete(ctx, 0, in); err != nil || out != "one" {
		t.Fatalf("step 1: %q %v", out, err)
	}
	step2 := append(in, trajectories.Message{Role: "assistant", Content: "one"}, trajectories.Message{Role: "user", Content: "obs"})
	if !e.ModelBlocks(0, step2) || StepOf(step2) != 2 {
		t.Error("step 2 should block")
	}
	if _, err := e.Complete(ctx, 0, step2); !errors.Is(err, context.Canceled) {
		t.Errorf("step 2: %v", err)
	}
	step3 := append(step2, trajectories.Message{Role: "assistant", Content: "x"})
	if _, err := e.Complete(context.Background(), 0, step3); !errors.Is(err, ErrScriptExhausted) {
		t.Errorf("step 3: %v", err)
	}
	if e.Snapshot().ModelCalls != 3 {
		t.Errorf("model calls = %d", e.Snapshot().ModelCalls)
	}
}

func TestCancelFault(t *testing.T) {
	sc := scenario()
	sc.Faults.Cancel = &scenarios.CancelSpec{Step: 1, During: "tool_call"}
	ctx, cancel := context.WithCancel(context.Background())
	e := New(sc, cancel)
	in := []trajectories.Message{{Role: "user", Content: "goal"}}
	if _, err := e.Complete(ctx, 0, in); err != nil {
		t.Fatal(err)
	}
	if !e.HandlerBlocks(0, "seq") {
		t.Error("HandlerBlocks ignores the cancel fault")
	}
	if _, err := e.CallHandler(ctx, 0, "seq", nil); !errors.Is(err, context.Canceled) {
		t.Errorf("the handler at the cancel step returned %v", err)
	}
	sc.Faults.Cancel = &scenarios.CancelSpec{Step: 1, During: "model_call"}
	ctx2, cancel2 := context.WithCancel(context.Background())
	e2 := New(sc, cancel2)
	if _, err := e2.Complete(ctx2, 0, in); !errors.Is(err, context.Canceled) {
		t.Errorf("the model call at the cancel step returned %v", err)
	}
}
