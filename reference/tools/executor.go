package tools

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	"github.com/polyloop/polyloop-conform/reference/action"
)

// RegistryExecutor is the action executor derived from a registry. It is a
// concrete type so a run request can recognise it and check that it was
// derived from the visible registry (0008.D4, 0006.D3).
type RegistryExecutor struct {
	registry *ToolRegistry
}

// Registry returns the registry this executor was derived from.
func (e *RegistryExecutor) Registry() *ToolRegistry { return e.registry }

// Sentences the executor writes itself. They go to the event stream; the
// history gets the run's SyntheticObservations instead (0007.D2).
const (
	SentenceNoToolCall = "this executor runs tool calls only, and the action holds no tool call"
)

// CallReport tells the caller what happened inside a handler beyond the
// outcome: the stop judge needs to know whether a completes_run tool
// succeeded, and audit wants the error's type.
type CallReport struct {
	HandlerCalled bool
	ErrorType     string
}

// Execute settles one action by the table of 0008.D4.
func (e *RegistryExecutor) Execute(ctx context.Context, a action.Action) (ActionOutcome, error) {
	out, _, err := e.ExecuteReport(ctx, a)
	return out, err
}

// ExecuteReport is Execute plus a CallReport.
func (e *RegistryExecutor) ExecuteReport(ctx context.Context, a action.Action) (ActionOutcome, CallReport, error) {
	var rep CallReport
	if a.Kind != action.KindToolCall {
		// 0008.D4.no-tool-call: an assembly mismatch, recorded, not fatal.
		return ActionOutcome{Status: StatusNotExecuted, Observation: SentenceNoToolCall, ObservationIsSynthetic: true}, rep, nil
	}
	if err := e.registry.Validate(a); err != nil {
		// 0008.D4.validate: nothing ran, so nothing counts as a step.
		return ActionOutcome{Status: StatusNotExecuted, Observation: err.Error(), ObservationIsSynthetic: true}, rep, nil
	}
	return e.Dispatch(ctx, a)
}

// Dispatch is ExecuteReport for a tool call the caller has already
// validated against this executor's registry: it calls the handler and
// fills the outcome by the rest of the 0008.D4 table.
func (e *RegistryExecutor) Dispatch(ctx context.Context, a action.Action) (ActionOutcome, CallReport, error) {
	var rep CallReport
	spec, ok := e.registry.Lookup(a.Tool)
	if !ok || a.Kind != action.KindToolCall {
		return e.ExecuteReport(ctx, a)
	}
	rep.HandlerCalled = true
	text, err := callHandler(ctx, spec.Handler, a.Arguments)
	if err == nil {
		return ActionOutcome{Status: StatusExecuted, Observation: text}, rep, nil // 0008.D4.normal-return
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		rep.ErrorType = "Cancelled"
		return ActionOutcome{}, rep, err // 0008.D4.cancelled: passes through unchanged
	}
	var envErr *ToolEnvironmentError
	if errors.As(err, &envErr) {
		rep.ErrorType = "ToolEnvironmentError"
		return ActionOutcome{Status: StatusEnvError, Observation: envErr.Message}, rep, nil // 0008.D4.env-error
	}
	rep.ErrorType = ErrorTypeName(err)
	// 0008.D4.handler-error: type and message only, no stack, no arguments.
	return ActionOutcome{Status: StatusExecuted, Observation: HandlerErrorText(rep.ErrorType, err.Error())}, rep, nil
}

// HandlerErrorText is a handler error's observation
// (0008.D4.handler-error.format): "TypeName: message", or the type name
// alone when the message is empty, as Python prints an exception's last
// line ("ValueError", never "ValueError: ").
func HandlerErrorText(typeName, message string) string {
	if message == "" {
		return typeName
	}
	return typeName + ": " + message
}

// callHandler runs a handler. A panic is 「别的异常」 (another exception) of
// 0008.D4.handler-error: it is recovered into a *PanicError, so the step
// is EXECUTED with the panic's type and text and no stack, and the run
// goes on instead of the process dying.
func callHandler(ctx context.Context, h ToolHandler, args map[string]any) (text string, err error) {
	defer func() {
		if r := recover(); r != nil {
			text, err = "", &PanicError{Value: r}
		}
	}()
	return h(ctx, args)
}

// PanicError is a recovered handler panic. It does not unwrap: a panic is
// neither a cancellation nor an environment error, whatever value it
// carried.
type PanicError struct {
	Value any
}

func (e *PanicError) Error() string {
	if err, ok := e.Value.(error); ok {
		return err.Error()
	}
	return fmt.Sprint(e.Value)
}

// TypeName is the panic value's type name ("panic" for a value that is not
// an error, such as a string).
func (e *PanicError) TypeName() string {
	if err, ok := e.Value.(error); ok {
		return ErrorTypeName(err)
	}
	return "panic"
}

// NamedError is an error that knows the type name to report; fakes use it to
// stand for another language's exception class (e.g. ValueError).
type NamedError interface {
	error
	TypeName() string
}

// ErrorTypeName is the name shown to the model for a handler error: the
// error's own TypeName when it has one, otherwise its Go type name without
// package or pointer marks.
func ErrorTypeName(err error) string {
	var named NamedError
	if errors.As(err, &named) {
		return named.TypeName()
	}
	t := reflect.TypeOf(err)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Name() == "" {
		return "error"
	}
	return t.Name()
}
