package protocol

import (
	"errors"
	"fmt"
	"sync"

	"github.com/polyloop/polyloop-conform/fakes"
	"github.com/polyloop/polyloop-conform/scenarios"
	"github.com/polyloop/polyloop-conform/trajectories"
)

// loop answers one process's calls until it sends a result, or until the
// runner kills it at the crash point (nil, nil).
func (x *Exchange) loop(p Peer) (*trajectories.Trajectory, error) {
	var calls sync.WaitGroup
	defer calls.Wait()
	waiting := "the next message after the run request"
	for {
		m, err := p.Next(x.wait, waiting)
		if ferr := x.failed(); ferr != nil {
			return nil, ferr
		}
		if err != nil {
			return nil, err
		}
		if err := x.admissible(m); err != nil {
			return nil, err
		}
		switch m.Type {
		case TypeResult:
			calls.Wait()
			return x.result(m)
		case TypeError:
			return nil, fmt.Errorf("the implementation reported an error: %s", m.Message)
		case TypeJournalPoint:
			killed, err := x.point(p, m)
			if killed || err != nil {
				return nil, err
			}
			waiting = fmt.Sprintf("the next message after journal point %s", m.Point)
			continue
		}
		next, err := x.answer(p, m, &calls)
		if err != nil {
			return nil, err
		}
		if next != "" {
			waiting = next
		}
	}
}

// admissible refuses a call after the runner cancelled the run, and a
// phase the spec does not have.
func (x *Exchange) admissible(m *Message) error {
	if m.Type == TypeModelCall || m.Type == TypeHandlerCall || m.Type == TypeExecuteCall {
		x.mu.Lock()
		after := x.cancelSent
		x.mu.Unlock()
		if after {
			return fmt.Errorf("the implementation sent %s %d after the runner cancelled the run: a cancelled run abandons its calls and stops, whatever it acknowledged with released (0004.D4, 0004.D4.release)", m.Type, m.Call)
		}
	}
	if m.Phase != nil && *m.Phase >= x.phases {
		return fmt.Errorf("%s %d names phase %d, but the spec has %d request(s); phase is the index in spec.requests", m.Type, m.Call, *m.Phase, x.phases)
	}
	return nil
}

// answer answers one call from the fakes and says what the runner waits
// for next ("" for no change). A call that blocks until cancellation is answered from its
// own goroutine (counted in calls); every other call inline, which saves
// a hand-off.
func (x *Exchange) answer(p Peer, m *Message, calls *sync.WaitGroup) (string, error) {
	switch m.Type {
	case TypeModelCall:
		if x.env.ModelBlocks(*m.Phase, *m.Input) {
			calls.Add(1)
			go func() { defer calls.Done(); x.answerModel(p, m) }()
		} else {
			x.answerModel(p, m)
		}
		return fmt.Sprintf("the next message after answering model_call %d", m.Call), nil
	case TypeHandlerCall:
		if x.env.HandlerBlocks(*m.Phase, m.Tool) {
			calls.Add(1)
			go func() { defer calls.Done(); x.answerHandler(p, m) }()
		} else {
			x.answerHandler(p, m)
		}
		return fmt.Sprintf("the next message after answering handler_call %d (%s)", m.Call, m.Tool), nil
	case TypeExecuteCall:
		return fmt.Sprintf("the next message after answering execute_call %d", m.Call), x.answerExecute(p, m)
	case TypeReleased:
		return "", x.released(m)
	case TypeEvent:
		return fmt.Sprintf("the next message after answering event %d", m.Call), x.answerEvent(p, m)
	case TypeMeasureCall:
		return fmt.Sprintf("the next message after answering measure_call %d", m.Call), x.answerMeasure(p, m)
	}
	return "", fmt.Errorf("unexpected message type %q from the implementation (docs/protocol.md lists the types)", m.Type)
}

// released takes a call off the cancelled ones and lets its fake go.
func (x *Exchange) released(m *Message) error {
	x.mu.Lock()
	b, ok := x.cancelled[m.Call]
	delete(x.cancelled, m.Call)
	x.mu.Unlock()
	if !ok {
		return fmt.Errorf("released names call %d, which the runner did not cancel (or was already released)", m.Call)
	}
	if b != nil {
		b.Release()
	}
	return nil
}

// point passes a journal point to the fakes, and kills the process if it
// is the crash point (true); else the implementation may continue.
func (x *Exchange) point(p Peer, m *Message) (bool, error) {
	if m.Point == nil {
		return false, errors.New("journal_point without point")
	}
	x.env.Point(m.Point.When, m.Point.Record, m.Point.Step)
	if m.Point.When == "after" {
		phase := 0
		if m.Phase != nil {
			phase = *m.Phase
		}
		x.lastAfter[phase] = m.Point.Seq
	}
	if x.crash != nil && x.crash.Matches(m.Point.When, m.Point.Record, m.Point.Step) && x.inPhase(x.crash.Phase, m.Phase) && x.tearsHere(m.Phase) {
		pt := *m.Point
		x.killedAt = &pt
		p.Kill()
		return true, nil
	}
	if x.onPoint != nil {
		pt := *m.Point
		if m.Phase != nil {
			pt.Phase = *m.Phase
		}
		x.onPoint(pt)
	}
	return false, p.Send(&Message{Type: TypeContinue, Call: m.Call})
}

// result checks that the result names this run and puts the scenario's
// ID back in its trajectory.
func (x *Exchange) result(m *Message) (*trajectories.Trajectory, error) {
	if ferr := x.failed(); ferr != nil {
		return nil, ferr
	}
	if m.Trajectory == nil {
		return nil, errors.New("result message without trajectory")
	}
	if m.ID != x.id {
		return nil, fmt.Errorf("result message for run %q while the runner is running %q", m.ID, x.id)
	}
	if m.Trajectory.Scenario == x.id {
		// The trajectory names the run as the spec did; the runner puts
		// the scenario's ID back.
		m.Trajectory.Scenario = x.sc.ID
	}
	return m.Trajectory, nil
}

// inPhase reports whether a journal point's phase (the message's index;
// absent is 0) is the phase a crash names ("" for a single request).
func (x *Exchange) inPhase(name string, phase *int) bool {
	if name == "" {
		return true
	}
	i := 0
	if phase != nil {
		i = *phase
	}
	runs := x.env.Scenario().Runs()
	return i >= 0 && i < len(runs) && runs[i].Name == name
}

// fail records the first harness-side failure of an answer; the loop
// turns it into the scenario's error.
func (x *Exchange) fail(err error) {
	x.mu.Lock()
	if x.err == nil {
		x.err = err
	}
	x.mu.Unlock()
}

func (x *Exchange) failed() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.err
}

// sendCancel cancels the run at a call. From then on the process may
// release calls and send its result, and nothing else: a cancelled run
// that goes on calling its model, its handlers or its executor did not
// stop (0004.D4), whatever its released messages say.
func (x *Exchange) sendCancel(p Peer, call int) error {
	x.mu.Lock()
	x.cancelSent = true
	x.mu.Unlock()
	// A scenario whose interruption is a deadline (faults.deadline) says
	// so: the implementation stops the run the way its deadline does.
	return p.Send(&Message{Type: TypeCancel, Call: call, Deadline: x.env.Deadline()})
}

// cancel tells the implementation that the call is cancelled and waits,
// until the result, for its released acknowledgement.
func (x *Exchange) cancel(p Peer, call int, b *fakes.Blocked) {
	x.mu.Lock()
	x.cancelled[call] = b
	x.mu.Unlock()
	x.sendCancel(p, call)
}

func (x *Exchange) answerModel(p Peer, m *Message) {
	out, err := x.env.Complete(x.ctx, *m.Phase, *m.Input)
	var failed *fakes.ModelFailure
	var b *fakes.Blocked
	switch {
	case err == nil:
	case errors.As(err, &failed):
		p.Send(&Message{Type: TypeModelResult, Call: m.Call, Error: &scenarios.NamedError{Type: "ModelCallError", Message: failed.Message}})
		return
	case errors.As(err, &b):
		x.cancel(p, m.Call, b)
		return
	default:
		if x.ctx.Err() == nil {
			x.fail(fmt.Errorf("model_call %d: %w", m.Call, err))
		}
		x.sendCancel(p, m.Call)
		return
	}
	p.Send(&Message{Type: TypeModelResult, Call: m.Call, Output: &out})
}

func (x *Exchange) answerHandler(p Peer, m *Message) {
	args := m.Arguments
	if args == nil {
		args = map[string]any{}
	}
	out, err := x.env.CallHandler(x.ctx, *m.Phase, m.Tool, args)
	var named *fakes.NamedError
	var envErr *fakes.EnvError
	var broke *fakes.Panic
	var b *fakes.Blocked
	switch {
	case errors.As(err, &b):
		x.cancel(p, m.Call, b)
	case err == nil:
		p.Send(&Message{Type: TypeHandlerResult, Call: m.Call, Output: &out})
	case errors.As(err, &broke):
		// Over the protocol a handler that breaks is an exception like any
		// other: the implementation's language decides what "breaks" means.
		p.Send(&Message{Type: TypeHandlerResult, Call: m.Call, Error: &scenarios.NamedError{Type: broke.Err.Type, Message: broke.Err.Message}})
	case errors.As(err, &named):
		p.Send(&Message{Type: TypeHandlerResult, Call: m.Call, Error: &scenarios.NamedError{Type: named.Type, Message: named.Message}})
	case errors.As(err, &envErr):
		p.Send(&Message{Type: TypeHandlerResult, Call: m.Call, EnvError: &envErr.Message})
	default:
		if x.ctx.Err() == nil {
			x.fail(fmt.Errorf("handler_call %d (%s): %w", m.Call, m.Tool, err))
		}
		x.sendCancel(p, m.Call)
	}
}

func (x *Exchange) answerExecute(p Peer, m *Message) error {
	if m.Action == nil {
		return errors.New("execute_call without action")
	}
	// The scripted executor answers by call order, whatever the action;
	// the action is recorded, for the engine to hold the trajectory to.
	s, err := x.env.Execute(x.ctx, *m.Phase, trajectories.Action{Kind: m.Action.Kind, Tool: m.Action.Tool, Arguments: m.Action.Arguments, Code: m.Action.Code})
	if err != nil {
		// The run was cancelled before the executor answered: the call
		// is cancelled like any other, and its released is expected.
		x.mu.Lock()
		x.cancelled[m.Call] = nil
		x.mu.Unlock()
		return x.sendCancel(p, m.Call)
	}
	return p.Send(&Message{Type: TypeExecuteResult, Call: m.Call, Outcome: OutcomeOf(s)})
}

func (x *Exchange) answerEvent(p Peer, m *Message) error {
	if m.Event == nil {
		return fmt.Errorf("event %d without event", m.Call)
	}
	answer := &Message{Type: TypeEventResult, Call: m.Call}
	switch x.env.Emit(*m.Phase, *m.Event) {
	case "error":
		answer.Error = &scenarios.NamedError{Type: "AuditStoreError", Message: "the audit store refused the event"}
	case "panic":
		text := "bug in the audit sink"
		answer.Panic = &text
	}
	return p.Send(answer)
}

func (x *Exchange) answerMeasure(p Peer, m *Message) error {
	if m.Text == nil {
		return fmt.Errorf("measure_call %d without text", m.Call)
	}
	answer := &Message{Type: TypeMeasureResult, Call: m.Call}
	if n, err := x.env.Measure(*m.Phase, m.Block, *m.Text); err != nil {
		answer.Error = &scenarios.NamedError{Type: "MeasureError", Message: err.Error()}
	} else {
		answer.Size = &n
	}
	return p.Send(answer)
}
