package polyloopkit

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sync"

	"github.com/polyloop/polyloop-conform/fakes"
	"github.com/polyloop/polyloop-conform/trajectories"
)

// incoming is any message of the runner's, decoded into one value: the
// loop reads its type and hands it on.
type incoming struct {
	Type     string `json:"type"`
	Call     int    `json:"call"`
	Protocol int    `json:"protocol"`
	// run and resume
	ID                  string `json:"id"`
	Spec                *Spec  `json:"spec"`
	JournalDir          string `json:"journal_dir"`
	ReportJournalPoints bool   `json:"report_journal_points"`
	WireSink            bool   `json:"wire_sink"`
	WireMeasure         bool   `json:"wire_measure"`
	Phase               int    `json:"phase"`
	TearTail            bool   `json:"tear_tail"`
	Damage              string `json:"damage"`
	// answers
	Output   *string     `json:"output"`
	Error    *NamedError `json:"error"`
	EnvError *string     `json:"env_error"`
	Outcome  *Outcome    `json:"outcome"`
	Deadline bool        `json:"deadline"`
	Panic    *string     `json:"panic"`
	Size     *int        `json:"size"`
	// fork
	Stdin  string `json:"stdin"`
	Stdout string `json:"stdout"`
	Stderr string `json:"stderr"`
}

// session is one process's side of the protocol: its calls, numbered
// from 1, and their answers.
type session struct {
	k   Kernel
	out io.Writer
	// fork answers a fork message (Main's pool); nil refuses it.
	fork func(m *incoming) (int, error)

	wmu     sync.Mutex
	mu      sync.Mutex
	next    int
	pending map[int]chan *incoming
	early   map[int]*incoming
	ended   chan struct{} // closed when the runner's input ends (endOnce)
	endOnce sync.Once
	// parked is closed once a call of the kernel's waits for an answer
	// that can no longer come (parkOnce).
	parked   chan struct{}
	parkOnce sync.Once
}

// Serve speaks the protocol for k, reading the runner's messages from in
// and writing the kernel's to out, until in ends or ctx is cancelled. It
// runs one scenario at a time, each in a goroutine of its own.
//
// When in ends, the answers already read are still given to the calls
// they answer (a transcript's runner lines fed in one go replay the
// exchange), and Serve returns once the scenario running has sent its
// result, or is waiting for an answer that can no longer come. Such a
// call never returns, nor does any call the kernel makes after it: the
// runner ends the input when it kills the process at a crash point, and a
// killed process runs no more code, so it writes nothing more to its
// journal. In a process of its own (Main) the process then exits; in
// process (package polylooptest) the goroutine stays parked until the
// test binary exits.
func Serve(ctx context.Context, k Kernel, in io.Reader, out io.Writer) error {
	return serve(ctx, &session{k: k, out: out}, in)
}

func serve(ctx context.Context, s *session, in io.Reader) error {
	if s.k.Name == "" {
		return errors.New("polyloopkit: the Kernel has no Name; the hello must name the implementation")
	}
	if s.k.Run == nil {
		return errors.New("polyloopkit: the Kernel has no Run function")
	}
	s.pending, s.early, s.ended, s.parked = map[int]chan *incoming{}, map[int]*incoming{}, make(chan struct{}), make(chan struct{})
	defer s.end()
	lines, readErr := readLines(in)
	var running chan struct{} // closed when the current run has sent its result
	for {
		var line []byte
		select {
		case <-ctx.Done():
			return ctx.Err()
		case l, ok := <-lines:
			if !ok {
				s.end()
				if running != nil {
					select {
					case <-running:
					case <-s.parked:
					}
				}
				return <-readErr
			}
			line = l
		}
		var m incoming
		if err := unmarshalExact(line, &m); err != nil {
			return fmt.Errorf("polyloopkit: not a protocol message (%v): %.120q", err, line)
		}
		if m.Type == "run" || m.Type == "resume" {
			if running != nil {
				<-running // the runner sends the next run only after a result
			}
			if m.Spec == nil {
				return fmt.Errorf("polyloopkit: a %s message without a spec", m.Type)
			}
			running = make(chan struct{})
			go s.runOne(ctx, &m, running)
			continue
		}
		if err := s.handle(&m); err != nil {
			return err
		}
	}
}

// readLines reads in's lines in a goroutine of its own, so that Serve
// can stop when its context ends; the channel closes at the end of in,
// and readErr then holds why (nil at a clean end).
func readLines(in io.Reader) (<-chan []byte, <-chan error) {
	lines, readErr := make(chan []byte), make(chan error, 1)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(in)
		sc.Buffer(make([]byte, 64*1024), maxLineBytes+1)
		for sc.Scan() {
			lines <- append([]byte(nil), sc.Bytes()...)
		}
		readErr <- sc.Err()
	}()
	return lines, readErr
}

// handle answers a message that is not a run: the handshake, an answer
// to a call, a fork request.
func (s *session) handle(m *incoming) error {
	switch m.Type {
	case "hello":
		if m.Protocol != ProtocolVersion {
			return fmt.Errorf("polyloopkit: the runner speaks protocol %d, this kit %d", m.Protocol, ProtocolVersion)
		}
		return s.send(s.k.hello(s.fork != nil))
	case "model_result", "handler_result", "execute_result", "continue", "cancel", "event_result", "measure_result":
		s.deliver(m)
		return nil
	case "fork":
		return s.forkOne(m)
	}
	return fmt.Errorf("polyloopkit: unknown message type %q from the runner", m.Type)
}

// forkOne answers a fork message with the process the pool hands over.
func (s *session) forkOne(m *incoming) error {
	if s.fork == nil {
		return s.send(ErrorMessage{Type: "error", Message: "this process offers no fork server"})
	}
	pid, err := s.fork(m)
	if err != nil {
		return s.send(ErrorMessage{Type: "error", Message: "fork: " + err.Error()})
	}
	return s.send(Forked{Type: "forked", Pid: pid})
}

// send writes one message as a line.
func (s *session) send(m any) error {
	line, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("polyloopkit: encode %T: %w", m, err)
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_, err = s.out.Write(append(line, '\n'))
	return err
}

// deliver hands an answer to the call waiting for it, or keeps it for a
// call not made yet (a transcript's runner lines fed in one go).
func (s *session) deliver(m *incoming) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ch, ok := s.pending[m.Call]; ok {
		delete(s.pending, m.Call)
		ch <- m
		return
	}
	s.early[m.Call] = m
}

// runOne runs one scenario and sends its result, or an error message when
// the kernel failed or panicked (with the stack on stderr): never a hung
// runner.
func (s *session) runOne(parent context.Context, m *incoming, done chan struct{}) {
	defer close(done)
	ctx, cancel, expire := fakes.RunContext(parent)
	defer cancel()
	seams := newSeams(s, m, cancel, expire)
	seams.runCtx = ctx
	tr, err := s.protect(ctx, *m.Spec, seams)
	if err != nil {
		s.send(ErrorMessage{Type: "error", ID: m.ID, Message: err.Error()})
		return
	}
	if tr == nil {
		s.send(ErrorMessage{Type: "error", ID: m.ID, Message: "the kernel returned no trajectory and no error"})
		return
	}
	s.send(ResultMessage{Type: "result", ID: m.ID, Trajectory: tr})
}

// protect runs the kernel, turning a panic into an error.
func (s *session) protect(ctx context.Context, spec Spec, seams *Seams) (tr *trajectories.Trajectory, err error) {
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(os.Stderr, "polyloopkit: the kernel panicked: %v\n%s", p, debug.Stack())
			tr, err = nil, fmt.Errorf("the kernel panicked: %v", p)
		}
	}()
	return s.k.Run(ctx, spec, seams)
}

// call sends one numbered call and waits for its answer. With release set
// (model, handler and executor calls), the runner's cancel, or ctx ending,
// releases the call: the kit sends released, ends the run's context the
// way the cancel says, and returns the context's error. Journal points,
// events and measures are answered even after a cancel, and wait for it.
func (s *session) call(ctx context.Context, seams *Seams, release bool, build func(call int) any) (*incoming, error) {
	ch := make(chan *incoming, 1)
	s.mu.Lock()
	s.next++
	n := s.next
	if a, ok := s.early[n]; ok {
		delete(s.early, n)
		ch <- a
	} else {
		s.pending[n] = ch
	}
	s.mu.Unlock()
	if err := s.send(build(n)); err != nil {
		s.park() // the runner is gone: so is this process, as far as it knows
	}
	if !release {
		ctx = context.Background()
	}
	var a *incoming
	select {
	case a = <-ch:
	case <-ctx.Done():
		s.mu.Lock()
		delete(s.pending, n)
		s.mu.Unlock()
		s.send(AnswerOnly{Type: "released", Call: n})
		return nil, ctx.Err()
	case <-s.ended:
		select {
		case a = <-ch: // read before the input ended
		default:
			s.park()
		}
	}
	if a.Type != "cancel" {
		return a, nil
	}
	if !release {
		return nil, fmt.Errorf("polyloopkit: the runner cancelled call %d, which it must answer", n)
	}
	s.send(AnswerOnly{Type: "released", Call: n})
	seams.stop(a.Deadline)
	return nil, seams.ctxErr()
}

// end marks the runner's input as ended.
func (s *session) end() { s.endOnce.Do(func() { close(s.ended) }) }

// park blocks the calling goroutine for ever: the runner killed this
// process (its input ended, or its output broke), and a killed process
// runs no more of the kernel's code.
func (s *session) park() {
	s.parkOnce.Do(func() { close(s.parked) })
	select {}
}

// unmarshalExact decodes data into v keeping every number as written
// (json.Number in an `any`): an integer past 2^53 in a schema bound, an
// argument or a handler's answer reaches the kernel exactly, never
// through a float64 (0006.D6.exact-numbers).
func unmarshalExact(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("more than one JSON value")
	}
	return nil
}
