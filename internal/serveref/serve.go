package serveref

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/polyloop/polyloop-conform/fakes"
	"github.com/polyloop/polyloop-conform/internal/deviation"
	"github.com/polyloop/polyloop-conform/internal/protocol"
	"github.com/polyloop/polyloop-conform/internal/refdriver"
	"github.com/polyloop/polyloop-conform/reference/journal"
	"github.com/polyloop/polyloop-conform/reference/tools"
	"github.com/polyloop/polyloop-conform/scenarios"
	"github.com/polyloop/polyloop-conform/trajectories"
)

// Identity is what an implementation says about itself in its hello.
type Identity struct {
	Name         string
	Version      string
	SpecVersion  string
	Capabilities []string
}

// ServeOptions change how the served reference behaves.
type ServeOptions struct {
	// Reword words every implementation-text sentence differently
	// (refdriver.Reword): the suite must still pass.
	Reword bool
	// Deviations serves a deviating reference (serve-reference --mutant).
	Deviations deviation.Set
}

// driverOptions are the reference driver's options for one run message:
// with wire_sink the audit sink sends every event to the runner, with
// wire_measure the size measure asks the runner, block by block.
func (s *server) driverOptions(m *protocol.Message) refdriver.Options {
	o := refdriver.Options{Schemas: s.schemas, Deviations: s.opts.Deviations}
	if m.WireSink {
		o.Sink, o.RewordSink = s.wireSink, s.opts.Reword
	}
	if m.WireMeasure {
		o.Measure = s.wireMeasure
	}
	return o
}

// wireSink sends one event to the runner and returns how the runner's
// sink took it: "" (taken), "error" or "panic".
func (s *server) wireSink(phase int, e trajectories.Event) string {
	// Not the run's context: a sink is not a call the run abandons.
	a, err := s.call(context.Background(), &protocol.Message{Type: protocol.TypeEvent, Phase: &phase, Event: &e})
	switch {
	case err != nil:
		return "error" // the runner is gone: the sink failed to deliver
	case a.Panic != nil:
		return "panic"
	case a.Error != nil:
		return "error"
	}
	return ""
}

// wireMeasure asks the runner for the size of one block.
func (s *server) wireMeasure(phase int, block, text string) (int, error) {
	a, err := s.call(context.Background(), &protocol.Message{Type: protocol.TypeMeasureCall, Phase: &phase, Block: block, Text: &text})
	switch {
	case err != nil:
		return 0, err
	case a.Type != protocol.TypeMeasureResult:
		return 0, fmt.Errorf("runner answered measure_call with %q", a.Type)
	case a.Error != nil:
		return 0, errors.New(a.Error.Message)
	case a.Size == nil:
		return 0, errors.New("runner's measure_result has neither size nor error")
	}
	return *a.Size, nil
}

// Serve runs the implementation side of the protocol for the reference
// kernel: it reads runner messages from in, runs scenarios one at a time,
// and writes calls and results to out, until in ends or ctx is cancelled.
//
// Answers that arrive before the call they answer are kept for it, so the
// runner's lines of a transcript, fed in one go, replay the exchange. At
// the end of input a call still waiting for an answer fails (no answer can
// come any more), the scenario ends, and Serve returns: an implementation
// whose runner has gone must not linger.
func Serve(ctx context.Context, id Identity, o ServeOptions, in io.Reader, out io.Writer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s := &server{id: id, opts: o, out: out, pending: map[int]chan *protocol.Message{}, early: map[int]*protocol.Message{},
		inputEnded: make(chan struct{}), schemas: &tools.SchemaCache{}}
	lines := make(chan []byte)
	readErr := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(in)
		sc.Buffer(make([]byte, 64*1024), protocol.MaxLineBytes)
		for sc.Scan() {
			select {
			case lines <- append([]byte(nil), sc.Bytes()...):
			case <-ctx.Done():
				return
			}
		}
		readErr <- sc.Err()
		close(lines)
	}()
	var wg sync.WaitGroup
	defer wg.Wait()
	done := make(chan struct{}, 1)
	busy := false
	for {
		var line []byte
		var ok bool
		select {
		case <-ctx.Done():
			return nil // SIGTERM or the caller: running scenarios see ctx
		case line, ok = <-lines:
		}
		if !ok {
			close(s.inputEnded)
			if err := <-readErr; err != nil {
				return fmt.Errorf("read runner messages: %w", err)
			}
			return nil
		}
		select {
		case <-done:
			busy = false
		default:
		}
		m, err := protocol.DecodeTrusted(line)
		if err != nil {
			return err
		}
		switch m.Type {
		case protocol.TypeHello:
			if m.Protocol != protocol.Version {
				return fmt.Errorf("runner speaks protocol %d, this implementation speaks %d", m.Protocol, protocol.Version)
			}
			if err := s.send(&protocol.Message{Type: protocol.TypeHello, Protocol: protocol.Version, Name: id.Name, Version: id.Version, SpecVersion: id.SpecVersion, Capabilities: id.Capabilities}); err != nil {
				return err
			}
		case protocol.TypeRun, protocol.TypeResume:
			if busy {
				// Wait for the previous scenario: the runner sends the next only after a result.
				<-done
			}
			if m.Spec == nil {
				return fmt.Errorf("%s message without spec", m.Type)
			}
			busy = true
			wg.Add(1)
			go func(m *protocol.Message) {
				defer wg.Done()
				s.runScenario(ctx, m)
				done <- struct{}{}
			}(m)
		case protocol.TypeModelResult, protocol.TypeHandlerResult, protocol.TypeExecuteResult, protocol.TypeContinue, protocol.TypeCancel,
			protocol.TypeEventResult, protocol.TypeMeasureResult:
			s.deliver(m)
		default:
			return fmt.Errorf("unknown message type %q from the runner", m.Type)
		}
	}
}

type server struct {
	id      Identity
	opts    ServeOptions
	wmu     sync.Mutex
	out     io.Writer
	mu      sync.Mutex
	pending map[int]chan *protocol.Message
	// early holds answers that came before their call (a replayed
	// transcript); inputEnded is closed at the end of the runner's input.
	early      map[int]*protocol.Message
	inputEnded chan struct{}
	next       int
	schemas    *tools.SchemaCache
}

func (s *server) send(m *protocol.Message) error {
	line, err := protocol.Encode(m)
	if err != nil {
		return err
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_, err = s.out.Write(line)
	return err
}

func (s *server) deliver(m *protocol.Message) {
	s.mu.Lock()
	ch := s.pending[m.Call]
	delete(s.pending, m.Call)
	if ch == nil {
		s.early[m.Call] = m
	}
	s.mu.Unlock()
	if ch != nil {
		ch <- m
	}
}

// call sends a request and waits for its answer or for ctx.
func (s *server) call(ctx context.Context, m *protocol.Message) (*protocol.Message, error) {
	ch := make(chan *protocol.Message, 1)
	s.mu.Lock()
	s.next++
	m.Call = s.next
	if a, ok := s.early[m.Call]; ok {
		delete(s.early, m.Call)
		ch <- a
	} else {
		s.pending[m.Call] = ch
	}
	s.mu.Unlock()
	if err := s.send(m); err != nil {
		return nil, err
	}
	select {
	case a := <-ch:
		return a, nil
	case <-s.inputEnded:
		s.mu.Lock()
		delete(s.pending, m.Call)
		s.mu.Unlock()
		select {
		case a := <-ch:
			return a, nil
		default:
		}
		return nil, fmt.Errorf("%s %d: the runner's input ended before its answer", m.Type, m.Call)
	case <-ctx.Done():
		s.mu.Lock()
		delete(s.pending, m.Call)
		s.mu.Unlock()
		// The call is abandoned: say so, as the protocol asks of every
		// implementation (0004.D4.release).
		if !s.opts.Deviations.Seams().Abandon() {
			s.send(&protocol.Message{Type: protocol.TypeReleased, Call: m.Call})
		}
		return nil, ctx.Err()
	}
}

func (s *server) runScenario(ctx context.Context, m *protocol.Message) {
	runCtx, cancel, expire := fakes.RunContext(ctx)
	defer cancel()
	env := &remoteEnv{s: s, spec: m.Spec, cancel: cancel, expire: expire}
	opts := s.driverOptions(m)
	sc := protocol.ScenarioFor(m.Spec)
	var tr *trajectories.Trajectory
	var err error
	switch {
	case m.Type == protocol.TypeResume:
		tr, err = resume(runCtx, m, sc, env, opts)
	case m.Spec.Phased && m.JournalDir != "" && m.Spec.Faults.JournalError == nil:
		var hookFor func(int) journal.Hook
		if m.ReportJournalPoints {
			hookFor = env.journalPointIn
		}
		tr, err = refdriver.ProcessPhases(runCtx, sc, env, m.JournalDir, hookFor, -1, opts)
	case m.ReportJournalPoints && m.Spec.Faults.JournalError != nil:
		o := opts
		o.JournalRoot, o.JournalHook = m.JournalDir, env.journalPoint
		tr, err = refdriver.Run(runCtx, sc, env, o)
	case m.ReportJournalPoints:
		tr, err = refdriver.Process(runCtx, sc, env, m.JournalDir, env.journalPoint, false, opts)
	case m.JournalDir != "" && m.Spec.Faults.JournalError == nil:
		// A journal without a crash: the run may stop without an end, for
		// the next process to resume.
		tr, err = refdriver.Process(runCtx, sc, env, m.JournalDir, nil, false, opts)
	default:
		o := opts
		o.JournalRoot = m.JournalDir
		tr, err = refdriver.Run(runCtx, sc, env, o)
	}
	if err != nil {
		s.send(&protocol.Message{Type: protocol.TypeError, ID: m.ID, Message: err.Error()})
		return
	}
	if s.opts.Reword {
		refdriver.Reword(tr)
	}
	s.send(&protocol.Message{Type: protocol.TypeResult, ID: m.ID, Trajectory: tr})
}

// resume resumes the journal a resume message names, as the next process
// does: cut or damaged first when the message asks (tear_tail, damage);
// in a phased scenario the named phase's own journal, after which the
// phases after it run.
func resume(ctx context.Context, m *protocol.Message, sc *scenarios.Scenario, env *remoteEnv, opts refdriver.Options) (*trajectories.Trajectory, error) {
	from, dir := 0, m.JournalDir
	if m.Spec.Phased {
		if m.Phase != nil {
			from = *m.Phase
		}
		dir = protocol.PhaseJournal(m.JournalDir, from)
	}
	if m.TearTail {
		if err := refdriver.TearTail(dir); err != nil {
			return nil, err
		}
	}
	if m.Damage != "" {
		if err := refdriver.DamageJournal(dir, m.Damage); err != nil {
			return nil, err
		}
	}
	if m.Spec.Phased {
		return refdriver.ProcessPhases(ctx, sc, env, m.JournalDir, nil, from, opts)
	}
	var hook journal.Hook
	if m.ReportJournalPoints {
		hook = env.journalPoint // the runner may kill this process too (faults.crash_on_resume)
	}
	return refdriver.Process(ctx, sc, env, m.JournalDir, hook, true, opts)
}

// remoteEnv answers the reference kernel's calls by asking the runner.
type remoteEnv struct {
	s      *server
	spec   *protocol.RunSpec
	cancel func() // the run's caller cancels it (a lost lease)
	expire func() // the run's deadline passes
}

func (e *remoteEnv) ask(ctx context.Context, m *protocol.Message) (*protocol.Message, error) {
	a, err := e.s.call(ctx, m)
	if err != nil {
		return nil, err
	}
	if a.Type == protocol.TypeCancel {
		// The runner cancelled the run: cancel it here, as lease loss
		// would (or let its deadline pass), and acknowledge that this call
		// is abandoned.
		stopped := context.Canceled
		if a.Deadline {
			e.expire()
			stopped = context.DeadlineExceeded
		} else {
			e.cancel()
		}
		if e.s.opts.Deviations.Seams().Abandon() {
			return nil, stopped
		}
		if err := e.s.send(&protocol.Message{Type: protocol.TypeReleased, Call: a.Call}); err != nil {
			return nil, err
		}
		return nil, stopped
	}
	return a, nil
}

func (e *remoteEnv) Complete(ctx context.Context, phase int, input []trajectories.Message) (string, error) {
	a, err := e.ask(ctx, &protocol.Message{Type: protocol.TypeModelCall, Phase: &phase, Input: &input})
	if err != nil {
		return "", err
	}
	switch {
	case a.Type == protocol.TypeModelResult && a.Error != nil:
		// The same failure the fakes give in process: the kernel stops
		// without calling the model again (0003.D3), with the same words.
		return "", &fakes.ModelFailure{Message: a.Error.Message}
	case a.Type != protocol.TypeModelResult || a.Output == nil:
		return "", fmt.Errorf("runner answered model_call with %q and no output", a.Type)
	}
	return *a.Output, nil
}

func (e *remoteEnv) HasHandler(tool string) bool {
	for _, t := range e.spec.Tools {
		if t.Name == tool {
			return t.HasHandler
		}
	}
	return false
}

func (e *remoteEnv) CallHandler(ctx context.Context, phase int, tool string, args map[string]any) (string, error) {
	a, err := e.ask(ctx, &protocol.Message{Type: protocol.TypeHandlerCall, Phase: &phase, Tool: tool, Arguments: args})
	if err != nil {
		return "", err
	}
	switch {
	case a.Type != protocol.TypeHandlerResult:
		return "", fmt.Errorf("runner answered handler_call with %q", a.Type)
	case a.Error != nil:
		return "", &fakes.NamedError{Type: a.Error.Type, Message: a.Error.Message}
	case a.EnvError != nil:
		return "", &fakes.EnvError{Message: *a.EnvError}
	case a.Output != nil:
		return *a.Output, nil
	}
	return "", errors.New("runner's handler_result has neither output, error nor env_error")
}

func (e *remoteEnv) Execute(ctx context.Context, phase int, act trajectories.Action) (scenarios.ScriptedOutcome, error) {
	view := &protocol.ActionView{Kind: act.Kind, Tool: act.Tool, Code: act.Code, Arguments: act.Arguments}
	a, err := e.ask(ctx, &protocol.Message{Type: protocol.TypeExecuteCall, Phase: &phase, Action: view})
	if err != nil {
		return scenarios.ScriptedOutcome{}, err
	}
	if a.Type != protocol.TypeExecuteResult || a.Outcome == nil {
		return scenarios.ScriptedOutcome{}, fmt.Errorf("runner answered execute_call with %q and no outcome", a.Type)
	}
	return a.Outcome.Scripted(), nil
}

// journalPoint reports a journal point of a single-request scenario.
func (e *remoteEnv) journalPoint(p journal.Point) error { return e.reportPoint(nil, p) }

// journalPointIn is the journal hook of phase i of a phased scenario: its
// points name the phase whose journal they write.
func (e *remoteEnv) journalPointIn(i int) journal.Hook {
	return func(p journal.Point) error { return e.reportPoint(&i, p) }
}

// reportPoint sends one journal point and waits for the runner's continue.
func (e *remoteEnv) reportPoint(phase *int, p journal.Point) error {
	point := p
	_, err := e.s.call(context.Background(), &protocol.Message{Type: protocol.TypeJournalPoint, Phase: phase, Point: &point})
	return err
}
