package protocol

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/polyloop/polyloop-conform/fakes"
	"github.com/polyloop/polyloop-conform/internal/atomicfile"
	"github.com/polyloop/polyloop-conform/internal/journalfile"
	"github.com/polyloop/polyloop-conform/scenarios"
	"github.com/polyloop/polyloop-conform/trajectories"
)

// SuiteVersion is sent in the runner's hello.
const SuiteVersion = "0.1.0"

// Client is the runner side: it runs scenarios on implementation processes
// it starts from Command, reusing an idle process for the next scenario
// and discarding one that misbehaved.
type Client struct {
	// Command starts one implementation process (not yet started).
	Command func() *exec.Cmd
	// Logs receives the implementations' stderr.
	Logs io.Writer
	// Transcripts, when set, is a directory that receives one
	// <scenario>.jsonl file per scenario with every message exchanged.
	Transcripts string
	// HandshakeTimeout bounds a new process's hello; zero means 10 s. A
	// replacement process's handshake does not count against the
	// scenario's own time limit.
	HandshakeTimeout time.Duration
	// Trace keeps each scenario's exchange in memory for Transcript (the
	// report's --trace), one line per message.
	Trace bool
	// Fresh runs every scenario on a new process (run --repeat): state a
	// process keeps between runs cannot make one repetition differ from
	// another unseen.
	Fresh bool
	// NoFork starts every process from Command even when the
	// implementation offers a fork server (run --fork=off).
	NoFork bool

	// zygote is the first process when it offers a fork server: it is
	// never sent a run, only fork requests, one at a time (forkMu).
	zygote *child
	forkMu sync.Mutex
	// base is the runner's context, from Start: when it is cancelled (a
	// signal), every exchange stops and its process group is killed.
	base  context.Context
	mu    sync.Mutex
	idle  []*child
	hello *Message
	logMu sync.Mutex
	// stderr keeps each scenario's share of the implementations' stderr;
	// problems are the runner's own failures (a transcript not written).
	stderr   map[string]*headTail
	problems []string
	traces   map[string]string
}

// maxTrace bounds the exchange kept per scenario for --trace.
const maxTrace = 256 << 10

// Transcript returns a scenario's protocol exchange (with Trace set): one
// line per message, "> " for the runner's and "< " for the
// implementation's.
func (c *Client) Transcript(id string) string {
	c.logMu.Lock()
	defer c.logMu.Unlock()
	return c.traces[id]
}

// maxStderr bounds the stderr kept per scenario for reports.
const maxStderr = 64 << 10

// Stderr returns what the implementation wrote to stderr while it ran the
// scenario: all of it up to 128 KiB, else its first and last 64 KiB with
// a "[… N bytes cut …]" line between them (a traceback comes last).
func (c *Client) Stderr(id string) string {
	c.logMu.Lock()
	defer c.logMu.Unlock()
	if b := c.stderr[id]; b != nil {
		return b.String()
	}
	return ""
}

// Problems returns the runner's own failures during the run, such as a
// transcript it could not write.
func (c *Client) Problems() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.problems...)
}

func (c *Client) problem(format string, args ...any) {
	c.mu.Lock()
	c.problems = append(c.problems, fmt.Sprintf(format, args...))
	c.mu.Unlock()
}

// stderrWriter tags each line a process writes to stderr with the scenario
// it is running, copies it to the runner's log and keeps it per scenario.
type stderrWriter struct {
	c       *Client
	mu      sync.Mutex
	current string // the scenario being run; "" between scenarios
	partial []byte
}

func (w *stderrWriter) setScenario(id string) {
	w.mu.Lock()
	if len(w.partial) > 0 {
		// The last line of a scenario without its newline still
		// belongs to it.
		w.line(append(w.partial, '\n'))
		w.partial = nil
	}
	w.current = id
	w.mu.Unlock()
}

func (w *stderrWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.partial = append(w.partial, p...)
	for {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 {
			break
		}
		w.line(w.partial[:i+1])
		w.partial = w.partial[i+1:]
	}
	if len(w.partial) > maxStderr {
		w.line(append(w.partial, '\n'))
		w.partial = nil
	}
	return len(p), nil
}

func (w *stderrWriter) line(l []byte) {
	tag := w.current
	if tag == "" {
		tag = "-"
	}
	c := w.c
	c.logMu.Lock()
	defer c.logMu.Unlock()
	if c.Logs != nil {
		fmt.Fprintf(c.Logs, "[%s] %s", tag, l)
	}
	if w.current == "" {
		return
	}
	if c.stderr == nil {
		c.stderr = map[string]*headTail{}
	}
	b := c.stderr[w.current]
	if b == nil {
		b = &headTail{}
		c.stderr[w.current] = b
	}
	b.Write(l)
}

// headTail keeps the first and the last maxStderr bytes written to it
// and counts what lies between: a long log keeps its start (what the
// implementation was doing) and its end (the traceback it died with).
type headTail struct {
	head, tail []byte
	cut        int64
}

func (h *headTail) Write(p []byte) {
	if n := min(maxStderr-len(h.head), len(p)); n > 0 {
		h.head = append(h.head, p[:n]...)
		p = p[n:]
	}
	if len(p) == 0 {
		return
	}
	h.tail = append(h.tail, p...)
	if over := len(h.tail) - maxStderr; over > 0 {
		h.cut += int64(over)
		h.tail = append(h.tail[:0:0], h.tail[over:]...)
	}
}

func (h *headTail) String() string {
	if h.cut == 0 {
		return string(h.head) + string(h.tail)
	}
	return fmt.Sprintf("%s\n[… %d bytes cut …]\n%s", h.head, h.cut, h.tail)
}

// Start launches one process and completes the handshake, so Name and
// Capabilities are known before any scenario runs.
func (c *Client) Start(ctx context.Context) error {
	c.base = ctx
	ch, err := c.spawn(nil)
	if err != nil {
		return err
	}
	if c.offers(ForkServer) && !c.NoFork {
		// The first process holds no run state and never will: every
		// process the runner needs from now on is forked from it.
		c.zygote = ch
		return nil
	}
	c.put(ch)
	return nil
}

// Name implements engine.Driver.
func (c *Client) Name() string {
	if c.hello == nil {
		return "implementation (not started)"
	}
	return fmt.Sprintf("%s %s (spec %s, over the stdio protocol)", c.hello.Name, c.hello.Version, c.hello.SpecVersion)
}

// Capabilities implements engine.Driver.
func (c *Client) Capabilities() []string {
	if c.hello == nil {
		return nil
	}
	return c.hello.Capabilities
}

// baseContext is the runner's context, from Start (Background before it).
func (c *Client) baseContext() context.Context {
	if c.base == nil {
		return context.Background()
	}
	return c.base
}

// offers reports whether the implementation claimed a protocol option.
func (c *Client) offers(option string) bool {
	return slices.Contains(c.Capabilities(), option)
}

// Close kills every idle process.
func (c *Client) Close() {
	c.mu.Lock()
	idle := c.idle
	c.idle = nil
	c.mu.Unlock()
	for _, ch := range idle {
		ch.kill()
	}
	if c.zygote != nil {
		c.zygote.kill()
	}
}

func (c *Client) put(ch *child) {
	if c.Fresh && c.hello != nil && ch.used {
		ch.kill()
		return
	}
	c.mu.Lock()
	c.idle = append(c.idle, ch)
	c.mu.Unlock()
}

func (c *Client) get(tr *transcript) (*child, error) {
	c.mu.Lock()
	if n := len(c.idle); n > 0 {
		ch := c.idle[n-1]
		c.idle = c.idle[:n-1]
		c.mu.Unlock()
		ch.attach(tr)
		return ch, nil
	}
	c.mu.Unlock()
	return c.spawn(tr)
}

// child is one implementation process: started from Command (cmd), or
// forked by the implementation's fork server (pid, its own process group).
type child struct {
	cmd   *exec.Cmd
	pid   int // a forked child's; 0 for one the runner started
	stdin io.WriteCloser
	lines chan lineResult
	exit  chan struct{}
	wmu   sync.Mutex
	tr    *transcript
	logs  *stderrWriter
	state string // what the runner is waiting for, for timeout messages
	// hello holds the handshake's two lines, replayed at the top of every
	// transcript this process serves so that each one stands alone.
	hello [][]byte
	// used is set once the process was sent a run.
	used bool
}

type lineResult struct {
	line []byte
	err  error
}

// spawn starts a process and shakes hands, within the handshake limit and
// the runner's context (not a scenario's deadline): a fork of the fork
// server when there is one, a new process otherwise.
func (c *Client) spawn(tr *transcript) (*child, error) {
	c.forkMu.Lock()
	zygote := c.zygote
	c.forkMu.Unlock()
	if zygote != nil {
		ch, err := c.fork(tr)
		if !errors.Is(err, errServerGone) {
			return ch, err
		}
		// The fork server itself is gone: say so once, and start
		// processes from the command line from now on.
		c.forkMu.Lock()
		if c.zygote == zygote {
			c.zygote = nil
			c.problem("the implementation's fork server stopped (%v); every later process was started from --impl instead", err)
		}
		c.forkMu.Unlock()
		zygote.kill()
	}
	cmd := c.Command()
	cmd.SysProcAttr = processAttr()
	// Once the process is gone, stop waiting for its stderr and stdout
	// to close: a detached child (setsid sleep &) may hold them for as
	// long as it lives.
	cmd.WaitDelay = 500 * time.Millisecond
	logs := &stderrWriter{c: c}
	cmd.Stderr = logs
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the implementation %q: %w", strings.Join(cmd.Args, " "), err)
	}
	ch := &child{cmd: cmd, stdin: stdin, lines: make(chan lineResult, 16), exit: make(chan struct{}), logs: logs}
	go ch.read(stdout)
	return c.handshake(ch, tr)
}

// handshakeLimit bounds a new process's hello.
func (c *Client) handshakeLimit() time.Duration {
	if c.HandshakeTimeout <= 0 {
		return 10 * time.Second
	}
	return c.HandshakeTimeout
}

// handshake sends the runner's hello and checks the answer.
func (c *Client) handshake(ch *child, tr *transcript) (*child, error) {
	limit := c.handshakeLimit()
	base := c.baseContext()
	hctx, cancel := context.WithTimeout(base, limit)
	defer cancel()
	ch.state = "its hello"
	if err := ch.send(&Message{Type: TypeHello, Suite: "polyloop-conform", SuiteVersion: SuiteVersion, Protocol: Version}); err != nil {
		ch.kill()
		return nil, err
	}
	m, err := ch.next(hctx)
	if err != nil {
		ch.kill()
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("handshake: no hello within %s (--handshake-timeout): %w", limit, err)
		}
		return nil, fmt.Errorf("handshake: %w", err)
	}
	if m.Type != TypeHello {
		ch.kill()
		return nil, fmt.Errorf("handshake: the implementation answered %q instead of hello", m.Type)
	}
	if m.Protocol != Version {
		ch.kill()
		return nil, fmt.Errorf("handshake: the implementation speaks protocol %d, this runner speaks %d", m.Protocol, Version)
	}
	if c.hello == nil {
		c.hello = m
	}
	ch.attach(tr)
	return ch, nil
}

// errServerGone is a fork request the fork server did not answer.
var errServerGone = errors.New("the fork server did not answer")

// fork asks the fork server for a new process: the runner makes three
// named pipes, the server forks a child that takes them as its stdin,
// stdout and stderr in a process group of its own, and says its pid. The
// child then shakes hands like any new process. A child of a server that
// holds no run state is as good as a new process for crash safety: only
// the journal on disk crosses a kill (docs/protocol.md, "Fork server").
func (c *Client) fork(tr *transcript) (*child, error) {
	dir, err := os.MkdirTemp("", "polyloop-fork-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	paths := [3]string{filepath.Join(dir, "stdin"), filepath.Join(dir, "stdout"), filepath.Join(dir, "stderr")}
	for _, p := range paths {
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			return nil, fmt.Errorf("fork server: %w", err)
		}
	}
	// Opening a named pipe waits for the other end: each is opened in its
	// own goroutine, and released by opening its other end here if the
	// child never comes.
	modes := [3]int{os.O_WRONLY, os.O_RDONLY, os.O_RDONLY}
	type opened struct {
		f   *os.File
		err error
	}
	done := [3]chan opened{}
	for i := range paths {
		done[i] = make(chan opened, 1)
		go func() {
			f, err := os.OpenFile(paths[i], modes[i], 0)
			done[i] <- opened{f, err}
		}()
	}
	files := [3]*os.File{}
	release := func() {
		for i := range paths {
			if files[i] != nil {
				files[i].Close()
				continue
			}
			other := os.O_RDONLY | syscall.O_NONBLOCK
			if modes[i] == os.O_RDONLY {
				other = os.O_WRONLY | syscall.O_NONBLOCK
			}
			if f, err := os.OpenFile(paths[i], other, 0); err == nil {
				if o := <-done[i]; o.f != nil {
					o.f.Close()
				}
				f.Close()
			}
		}
	}
	base := c.baseContext()
	hctx, cancel := context.WithTimeout(base, c.handshakeLimit())
	defer cancel()
	c.forkMu.Lock()
	zygote := c.zygote
	var m *Message
	if zygote == nil {
		c.forkMu.Unlock()
		release()
		return nil, errServerGone
	}
	{
		zygote.state = "its forked message"
		if err = zygote.send(&Message{Type: TypeFork, Stdin: paths[0], Stdout: paths[1], Stderr: paths[2]}); err == nil {
			m, err = zygote.next(hctx)
		}
	}
	c.forkMu.Unlock()
	switch {
	case err != nil:
		release()
		return nil, fmt.Errorf("fork server: %w: %w", errServerGone, err)
	case m.Type == TypeError:
		release()
		return nil, fmt.Errorf("fork server: the implementation could not fork: %s", m.Message)
	case m.Type != TypeForked || m.Pid <= 0:
		release()
		return nil, fmt.Errorf("fork server: the implementation answered fork with %q and no pid", m.Type)
	}
	for i := range paths {
		select {
		case o := <-done[i]:
			if o.err != nil {
				release()
				return nil, fmt.Errorf("fork server: open %s: %w", paths[i], o.err)
			}
			files[i] = o.f
		case <-hctx.Done():
			syscall.Kill(-m.Pid, syscall.SIGKILL)
			release()
			return nil, fmt.Errorf("fork server: the forked process %d did not open its pipes within %s (--handshake-timeout)", m.Pid, c.handshakeLimit())
		}
	}
	logs := &stderrWriter{c: c}
	go func() {
		io.Copy(logs, files[2])
		files[2].Close()
	}()
	ch := &child{pid: m.Pid, stdin: files[0], lines: make(chan lineResult, 16), exit: make(chan struct{}), logs: logs}
	go func() {
		ch.read(files[1])
		files[1].Close()
	}()
	return c.handshake(ch, tr)
}

// attach starts recording this process's exchange into tr, handshake first.
func (ch *child) attach(tr *transcript) {
	ch.tr = tr
	tr.add("runner", ch.hello[0])
	tr.add("implementation", ch.hello[1])
}

func (ch *child) read(r io.Reader) {
	defer close(ch.lines)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), MaxLineBytes)
	for sc.Scan() {
		ch.lines <- lineResult{line: append([]byte(nil), sc.Bytes()...)}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			err = fmt.Errorf("the implementation wrote a line longer than %d bytes (is it flooding stdout?)", MaxLineBytes)
		}
		ch.lines <- lineResult{err: err}
	}
}

func (ch *child) send(m *Message) error {
	line, err := Encode(m)
	if err != nil {
		return err
	}
	ch.wmu.Lock()
	defer ch.wmu.Unlock()
	if m.Type == TypeHello {
		ch.hello = append(ch.hello, line)
	}
	ch.tr.add("runner", line)
	if _, err := ch.stdin.Write(line); err != nil {
		return fmt.Errorf("write to the implementation's stdin: %w (did it exit?)", err)
	}
	return nil
}

// next waits for the next message.
func (ch *child) next(ctx context.Context) (*Message, error) {
	select {
	case lr, ok := <-ch.lines:
		if !ok {
			return nil, fmt.Errorf("the implementation closed its stdout (%s) while the runner waited for %s", ch.exitStatus(), ch.state)
		}
		if lr.err != nil {
			return nil, lr.err
		}
		if len(ch.hello) == 1 {
			ch.hello = append(ch.hello, lr.line)
		}
		ch.tr.add("implementation", lr.line)
		return Decode(lr.line)
	case <-ctx.Done():
		return nil, fmt.Errorf("no answer while the runner waited for %s: %w", ch.state, ctx.Err())
	}
}

func (ch *child) exitStatus() string {
	if ch.pid != 0 {
		return "a child of the fork server, whose exit status the runner cannot see"
	}
	done := make(chan error, 1)
	go func() { done <- ch.cmd.Wait() }()
	select {
	case err := <-done:
		close(ch.exit)
		if err == nil {
			return "exit status 0"
		}
		return err.Error()
	case <-time.After(2 * time.Second):
		return "process still running"
	}
}

// group is the process group to signal: the process's own (it was
// started, or forked, as a group leader); 0 before it started.
func (ch *child) group() int {
	if ch.pid != 0 {
		return ch.pid
	}
	if ch.cmd != nil && ch.cmd.Process != nil {
		return ch.cmd.Process.Pid
	}
	return 0
}

// signalGroup sends SIGKILL to the process group without waiting.
func (ch *child) signalGroup() {
	if g := ch.group(); g != 0 {
		syscall.Kill(-g, syscall.SIGKILL)
	}
}

// kill ends the whole process group, so a shell wrapper's children die too.
func (ch *child) kill() {
	g := ch.group()
	if g == 0 {
		return
	}
	syscall.Kill(-g, syscall.SIGKILL)
	ch.stdin.Close()
	if ch.pid != 0 {
		// A forked child is the fork server's to reap; its stdout ends
		// when it dies.
		for range ch.lines {
		}
		return
	}
	select {
	case <-ch.exit:
	default:
		ch.cmd.Wait()
	}
	for range ch.lines {
	}
}

// Run implements engine.Driver: it runs sc on an implementation process,
// answering its calls from env.
func (c *Client) Run(ctx context.Context, sc *scenarios.Scenario, env *fakes.Env) (*trajectories.Trajectory, error) {
	return c.RunWith(ctx, sc, env, RunOptions{})
}

// RunOptions ask more of a run than its scenario does, for crash
// exploration.
type RunOptions struct {
	// Points asks for journal points; each one passed is given to OnPoint.
	Points  bool
	OnPoint func(Point)
	// CrashAt kills the process at this point instead of the scenario's
	// own crash (Step 0 matches a run-level record).
	CrashAt *scenarios.CrashSpec
}

// RunWith is Run with options.
func (c *Client) RunWith(ctx context.Context, sc *scenarios.Scenario, env *fakes.Env, o RunOptions) (*trajectories.Trajectory, error) {
	tr := c.newTranscript(sc.ID)
	defer tr.flush()
	// The engine cancels ctx when a fake blocks; the exchange must go on
	// until the implementation reports its cancelled run, so only the
	// deadline, or the runner itself stopping (a signal), ends it.
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(10 * time.Minute)
	}
	wait, cancel := context.WithDeadline(context.WithoutCancel(ctx), deadline)
	defer cancel()
	if c.base != nil {
		stop := context.AfterFunc(c.base, cancel)
		defer stop()
	}
	ch, err := c.get(tr)
	if err != nil {
		return nil, err
	}
	ch.logs.setScenario(sc.ID)
	defer ch.logs.setScenario("")
	// When the deadline passes or the runner is stopped, the process
	// group dies at once: a runner blocked writing to an implementation
	// that stopped reading its stdin is freed by the broken pipe, and a
	// signal does not wait for the next message.
	var current sync.Mutex
	running := ch
	stopKill := context.AfterFunc(wait, func() {
		current.Lock()
		defer current.Unlock()
		running.signalGroup()
	})
	defer stopKill()
	setRunning := func(c *child) {
		current.Lock()
		running = c
		current.Unlock()
	}
	// The wire carries an opaque run ID, never the scenario's: an
	// implementation cannot tell the suite's scenarios (or generate's
	// cases) from a team's own and answer them differently. The mapping
	// stays here and in the transcript's file name.
	runID := NewRunID()
	run := &Message{Type: TypeRun, ID: runID, Spec: SpecFor(sc)}
	run.Spec.Scenario = runID
	// The parts of a fault the runner can play, it plays: an
	// implementation that offers them is not told the fault at all.
	if c.offers(WireSink) {
		env.Offer(scenarios.PartSink)
		run.WireSink = true
		run.Spec.Faults.Sink = ""
	}
	if c.offers(WireMeasure) {
		env.Offer(scenarios.PartMeasure)
		run.WireMeasure = true
		for i := range run.Spec.Requests {
			run.Spec.Requests[i].MeasureUnknown = nil
		}
	}
	var crash *scenarios.CrashSpec
	explore := o.CrashAt != nil || o.Points
	if explore || sc.Faults.Crash != nil || sc.Faults.JournalError != nil || sc.Faults.Resume {
		dir, err := os.MkdirTemp("", "polyloop-conform-journal-*")
		if err != nil {
			c.put(ch)
			return nil, err
		}
		defer os.RemoveAll(dir)
		run.JournalDir = filepath.Join(dir, "run")
		switch {
		case explore:
			run.ReportJournalPoints = true
			crash = o.CrashAt
		case sc.Faults.Crash != nil:
			crash = sc.Faults.Crash
			run.ReportJournalPoints = true
		default:
			// A journal write fault or a next holder: no kill, but the
			// points show whether each action's intent was written before
			// the action ran (0002.D1), which the engine checks.
			run.ReportJournalPoints = true
		}
	}
	x := &exchange{ctx: ctx, wait: wait, env: env, crash: crash, id: runID, scenario: sc.ID, phases: len(run.Spec.Requests), cancelled: map[int]*fakes.Blocked{}, onPoint: o.OnPoint}
	env.Reporting(run.ReportJournalPoints)
	ch.used = true
	if err := ch.send(run); err != nil {
		ch.kill()
		return nil, err
	}
	out, err := x.loop(ch)
	if err != nil {
		ch.kill()
		return nil, err
	}
	if c.offers(JournalLines) && run.ReportJournalPoints && sc.Faults.JournalError == nil && sc.Request != nil {
		if err := x.journalMatchesPoints(run.JournalDir); err != nil {
			if x.killedAt == nil {
				ch.kill()
			}
			return nil, err
		}
	}
	if x.killedAt == nil {
		c.put(ch)
		if out.AssemblyError != nil {
			// The request was refused before anything ran: there is no
			// crash point to reach and nothing to resume, in process as
			// over the protocol.
			return out, nil
		}
		if crash != nil {
			return nil, errors.New("the run finished without reaching the scenario's crash point; check the implementation's journal_point messages")
		}
		if run.JournalDir != "" && sc.Faults.JournalError == nil {
			if err := journalKept(run.JournalDir); err != nil {
				return nil, err
			}
		}
		if !sc.Faults.Resume {
			return out, nil
		}
		if out.End != nil {
			return nil, fmt.Errorf("the run ended (%s) instead of stopping without an end, so the next holder has nothing to resume", out.End.Reason)
		}
	}
	// The first process is dead, or its run stopped without an end: a new
	// process resumes the journal, as the next holder of the run would.
	// Only a kill before the first write leaves nothing to resume from.
	if k := x.killedAt; k != nil && !(k.When == "before" && k.Seq <= 1) {
		if err := journalKept(run.JournalDir); err != nil {
			return nil, err
		}
	}
	resume := &Message{Type: TypeResume, ID: runID, Spec: run.Spec, JournalDir: run.JournalDir, TearTail: sc.Faults.TornTail, Damage: sc.Faults.JournalDamage,
		WireSink: run.WireSink, WireMeasure: run.WireMeasure}
	journal := run.JournalDir
	if run.Spec.Phased {
		// Each phase journals in a directory of its own; the next process
		// resumes the phase the fault named, then runs the ones after it.
		target := sc.FaultPhase()
		resume.Phase = &target
		journal = PhaseJournal(run.JournalDir, target)
	}
	if c.offers(JournalLines) && (resume.TearTail || resume.Damage != "") {
		// The runner cuts or damages the journal itself, as a crash (or
		// the disk) would: the implementation is only asked to resume.
		if err := playJournal(journal, resume.TearTail, resume.Damage); err != nil {
			return nil, err
		}
		env.JournalPlayed()
		resume.TearTail, resume.Damage = false, ""
	}
	ch, err = c.spawn(tr)
	if err != nil {
		return nil, fmt.Errorf("start the resuming process: %w", err)
	}
	setRunning(ch)
	ch.logs.setScenario(sc.ID)
	env.Restarted()
	if err := ch.send(resume); err != nil {
		ch.kill()
		return nil, err
	}
	x.crash = nil
	x.cancelSent = false // the next holder's run is not cancelled
	env.Reporting(false)
	// The next holder of the run is not cancelled: the first process's
	// cancellation (faults.cancel) ended with it, as in process, where the
	// resume runs on a context without that cancellation.
	x.ctx = x.wait
	out, err = x.loop(ch)
	if err != nil {
		ch.kill()
		return nil, err
	}
	c.put(ch)
	if out.Resume == nil && out.RunError != nil && out.RunError.Kind == "journal_damaged" {
		return out, nil // resume refused the journal: nothing was resumed
	}
	if out.Resume == nil {
		return nil, errors.New("the resumed trajectory has no resume field")
	}
	if x.killedAt != nil {
		out.Resume.CrashPoint = trajectories.CrashPointName(x.killedAt.When, x.killedAt.Record, x.killedAt.Step)
	}
	return out, nil
}

// exchange answers one process's calls until it sends a result.
type exchange struct {
	ctx      context.Context // cancelled by the engine when a fake blocks
	wait     context.Context // ends only at the deadline
	env      *fakes.Env
	crash    *scenarios.CrashSpec
	killedAt *Point
	id       string // the opaque run ID, which results must name
	scenario string // the scenario behind it
	phases   int    // how many requests the spec has; calls' phase indexes them
	// cancelled holds the calls the runner cancelled, until the
	// implementation acknowledges them with released.
	cancelled map[int]*fakes.Blocked
	onPoint   func(Point) // sees every journal point passed, if set
	// lastAfter is the seq of the latest "after" journal point: how many
	// records the journal holds once the process stops at a point.
	lastAfter int
	// cancelSent is set once the runner cancelled this process's run.
	cancelSent bool

	mu  sync.Mutex
	err error
}

func (x *exchange) loop(ch *child) (*trajectories.Trajectory, error) {
	var calls sync.WaitGroup
	defer calls.Wait()
	ch.state = "the next message after the run request"
	for {
		m, err := ch.next(x.wait)
		if ferr := x.failed(); ferr != nil {
			return nil, ferr
		}
		if err != nil {
			return nil, err
		}
		if m.Type == TypeModelCall || m.Type == TypeHandlerCall || m.Type == TypeExecuteCall {
			x.mu.Lock()
			after := x.cancelSent
			x.mu.Unlock()
			if after {
				return nil, fmt.Errorf("the implementation sent %s %d after the runner cancelled the run: a cancelled run abandons its calls and stops, whatever it acknowledged with released (0004.D4, 0004.D4.release)", m.Type, m.Call)
			}
		}
		if m.Phase != nil && *m.Phase >= x.phases {
			return nil, fmt.Errorf("%s %d names phase %d, but the spec has %d request(s); phase is the index in spec.requests", m.Type, m.Call, *m.Phase, x.phases)
		}
		switch m.Type {
		case TypeModelCall:
			ch.state = fmt.Sprintf("the next message after answering model_call %d", m.Call)
			// A call that blocks until cancellation is answered from its own
			// goroutine; every other call inline, which saves a hand-off.
			if x.env.ModelBlocks(*m.Phase, *m.Input) {
				calls.Add(1)
				go func() { defer calls.Done(); x.answerModel(ch, m) }()
			} else {
				x.answerModel(ch, m)
			}
		case TypeHandlerCall:
			ch.state = fmt.Sprintf("the next message after answering handler_call %d (%s)", m.Call, m.Tool)
			if x.env.HandlerBlocks(*m.Phase, m.Tool) {
				calls.Add(1)
				go func() { defer calls.Done(); x.answerHandler(ch, m) }()
			} else {
				x.answerHandler(ch, m)
			}
		case TypeExecuteCall:
			ch.state = fmt.Sprintf("the next message after answering execute_call %d", m.Call)
			if err := x.answerExecute(ch, m); err != nil {
				return nil, err
			}
		case TypeReleased:
			x.mu.Lock()
			b, ok := x.cancelled[m.Call]
			delete(x.cancelled, m.Call)
			x.mu.Unlock()
			if !ok {
				return nil, fmt.Errorf("released names call %d, which the runner did not cancel (or was already released)", m.Call)
			}
			if b != nil {
				b.Release()
			}
		case TypeJournalPoint:
			if m.Point == nil {
				return nil, errors.New("journal_point without point")
			}
			x.env.Point(m.Point.When, m.Point.Record, m.Point.Step)
			if m.Point.When == "after" {
				x.lastAfter = m.Point.Seq
			}
			if x.crash != nil && x.crash.Matches(m.Point.When, m.Point.Record, m.Point.Step) && x.inPhase(x.crash.Phase, m.Phase) {
				p := *m.Point
				x.killedAt = &p
				ch.kill()
				return nil, nil
			}
			if x.onPoint != nil {
				x.onPoint(*m.Point)
			}
			ch.state = fmt.Sprintf("the next message after journal point %s", m.Point)
			if err := ch.send(&Message{Type: TypeContinue, Call: m.Call}); err != nil {
				return nil, err
			}
		case TypeEvent:
			if m.Event == nil {
				return nil, fmt.Errorf("event %d without event", m.Call)
			}
			ch.state = fmt.Sprintf("the next message after answering event %d", m.Call)
			answer := &Message{Type: TypeEventResult, Call: m.Call}
			switch x.env.Emit(*m.Phase, *m.Event) {
			case "error":
				answer.Error = &scenarios.NamedError{Type: "AuditStoreError", Message: "the audit store refused the event"}
			case "panic":
				text := "bug in the audit sink"
				answer.Panic = &text
			}
			if err := ch.send(answer); err != nil {
				return nil, err
			}
		case TypeMeasureCall:
			if m.Text == nil {
				return nil, fmt.Errorf("measure_call %d without text", m.Call)
			}
			ch.state = fmt.Sprintf("the next message after answering measure_call %d", m.Call)
			answer := &Message{Type: TypeMeasureResult, Call: m.Call}
			if n, err := x.env.Measure(*m.Phase, m.Block, *m.Text); err != nil {
				answer.Error = &scenarios.NamedError{Type: "MeasureError", Message: err.Error()}
			} else {
				answer.Size = &n
			}
			if err := ch.send(answer); err != nil {
				return nil, err
			}
		case TypeResult:
			calls.Wait()
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
				// The trajectory names the run as the spec did; the
				// runner puts the scenario's ID back.
				m.Trajectory.Scenario = x.scenario
			}
			return m.Trajectory, nil
		case TypeError:
			return nil, fmt.Errorf("the implementation reported an error: %s", m.Message)
		default:
			return nil, fmt.Errorf("unexpected message type %q from the implementation (docs/protocol.md lists the types)", m.Type)
		}
	}
}

// inPhase reports whether a journal point's phase (the message's index;
// absent is 0) is the phase a crash names ("" for a single request).
func (x *exchange) inPhase(name string, phase *int) bool {
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
func (x *exchange) fail(err error) {
	x.mu.Lock()
	if x.err == nil {
		x.err = err
	}
	x.mu.Unlock()
}

func (x *exchange) failed() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.err
}

// cancel tells the implementation that the call is cancelled and waits,
// until the result, for its released acknowledgement.
// sendCancel cancels the run at a call. From then on the process may
// release calls and send its result, and nothing else: a cancelled run
// that goes on calling its model, its handlers or its executor did not
// stop (0004.D4), whatever its released messages say.
func (x *exchange) sendCancel(ch *child, call int) error {
	x.mu.Lock()
	x.cancelSent = true
	x.mu.Unlock()
	// A scenario whose interruption is a deadline (faults.deadline) says
	// so: the implementation stops the run the way its deadline does.
	return ch.send(&Message{Type: TypeCancel, Call: call, Deadline: x.env.Deadline()})
}

func (x *exchange) cancel(ch *child, call int, b *fakes.Blocked) {
	x.mu.Lock()
	x.cancelled[call] = b
	x.mu.Unlock()
	x.sendCancel(ch, call)
}

func (x *exchange) answerModel(ch *child, m *Message) {
	out, err := x.env.Complete(x.ctx, *m.Phase, *m.Input)
	var failed *fakes.ModelFailure
	var b *fakes.Blocked
	switch {
	case err == nil:
	case errors.As(err, &failed):
		ch.send(&Message{Type: TypeModelResult, Call: m.Call, Error: &scenarios.NamedError{Type: "ModelCallError", Message: failed.Message}})
		return
	case errors.As(err, &b):
		x.cancel(ch, m.Call, b)
		return
	default:
		if x.ctx.Err() == nil {
			x.fail(fmt.Errorf("model_call %d: %w", m.Call, err))
		}
		x.sendCancel(ch, m.Call)
		return
	}
	ch.send(&Message{Type: TypeModelResult, Call: m.Call, Output: &out})
}

func (x *exchange) answerHandler(ch *child, m *Message) {
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
		x.cancel(ch, m.Call, b)
	case err == nil:
		ch.send(&Message{Type: TypeHandlerResult, Call: m.Call, Output: &out})
	case errors.As(err, &broke):
		// Over the protocol a handler that breaks is an exception like any
		// other: the implementation's language decides what "breaks" means.
		ch.send(&Message{Type: TypeHandlerResult, Call: m.Call, Error: &scenarios.NamedError{Type: broke.Err.Type, Message: broke.Err.Message}})
	case errors.As(err, &named):
		ch.send(&Message{Type: TypeHandlerResult, Call: m.Call, Error: &scenarios.NamedError{Type: named.Type, Message: named.Message}})
	case errors.As(err, &envErr):
		ch.send(&Message{Type: TypeHandlerResult, Call: m.Call, EnvError: &envErr.Message})
	default:
		if x.ctx.Err() == nil {
			x.fail(fmt.Errorf("handler_call %d (%s): %w", m.Call, m.Tool, err))
		}
		x.sendCancel(ch, m.Call)
	}
}

func (x *exchange) answerExecute(ch *child, m *Message) error {
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
		return x.sendCancel(ch, m.Call)
	}
	return ch.send(&Message{Type: TypeExecuteResult, Call: m.Call, Outcome: OutcomeOf(s)})
}

// journalMatchesPoints holds the journal of an implementation that offers
// journal-lines to the points it reported: one file in journal_dir, as
// many whole records as the latest "after" point's seq, nothing torn (the
// runner stopped the process at a point, between writes).
func (x *exchange) journalMatchesPoints(dir string) error {
	if x.lastAfter == 0 {
		return nil // stopped before the first write finished: nothing to hold
	}
	path, err := journalfile.Find(dir)
	if err != nil {
		return err
	}
	n, torn, err := journalfile.Records(path)
	switch {
	case err != nil:
		return fmt.Errorf("read the journal: %w", err)
	case torn || n != x.lastAfter:
		return fmt.Errorf("the journal in journal_dir holds %d whole record(s)%s, but the implementation's journal points said %d were written: journal-lines means one record per line in that file (0002.D1)", n, map[bool]string{true: " and a torn one", false: ""}[torn], x.lastAfter)
	}
	return nil
}

// playJournal cuts or damages the journal of an implementation that
// offers journal-lines, as the resume message would otherwise ask it to.
func playJournal(dir string, tear bool, damage string) error {
	path, err := journalfile.Find(dir)
	if err != nil {
		return err
	}
	if tear {
		return journalfile.Tear(path)
	}
	return journalfile.Damage(path, damage)
}

// transcript collects one scenario's exchange for --transcripts.
type transcript struct {
	mu    sync.Mutex
	path  string // "" when only traced
	lines [][]byte
	trace strings.Builder
	keep  func(text string)                // stores the trace, nil without Trace
	fail  func(format string, args ...any) // reports a write error
}

func (c *Client) newTranscript(id string) *transcript {
	if (c.Transcripts == "" && !c.Trace) || !scenarios.IDPattern.MatchString(id) {
		return nil
	}
	t := &transcript{fail: c.problem}
	if c.Transcripts != "" {
		t.path = filepath.Join(c.Transcripts, id+".jsonl")
	}
	if c.Trace {
		t.keep = func(text string) {
			c.logMu.Lock()
			defer c.logMu.Unlock()
			if c.traces == nil {
				c.traces = map[string]string{}
			}
			c.traces[id] += text
		}
	}
	return t
}

func (t *transcript) add(from string, line []byte) {
	if t == nil {
		return
	}
	raw := json.RawMessage(strings.TrimSpace(string(line)))
	var entry []byte
	if json.Valid(raw) {
		entry, _ = json.Marshal(struct {
			From    string          `json:"from"`
			Message json.RawMessage `json:"message"`
		}{from, raw})
	} else {
		entry, _ = json.Marshal(struct {
			From string `json:"from"`
			Raw  string `json:"raw"`
		}{from, string(line)})
	}
	t.mu.Lock()
	t.lines = append(t.lines, entry)
	if t.keep != nil && t.trace.Len() < maxTrace {
		mark := "> "
		if from != "runner" {
			mark = "< "
		}
		t.trace.WriteString(mark + strings.TrimSpace(string(line)) + "\n")
	}
	t.mu.Unlock()
}

func (t *transcript) flush() {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.keep != nil {
		t.keep(t.trace.String())
	}
	if t.path == "" {
		return
	}
	var b strings.Builder
	for _, l := range t.lines {
		b.Write(l)
		b.WriteByte('\n')
	}
	if err := os.MkdirAll(filepath.Dir(t.path), 0o755); err != nil {
		t.fail("--transcripts: %v", err)
		return
	}
	if err := atomicfile.Write(t.path, []byte(b.String())); err != nil {
		t.fail("--transcripts: %v", err)
	}
}

// NewRunID returns an opaque run ID for the wire: "run." and 16 random
// hex digits, unrelated to the scenario it stands for (and shaped like a
// scenario ID, so the schemas that check IDs accept it).
func NewRunID() string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return "run." + hex.EncodeToString(b[:])
}

// journalKept checks that a run that journals left its journal where the
// runner said: a journal kept elsewhere (under the scenario's name, say)
// passes a run and only fails a crash exploration, and the next holder,
// given journal_dir, would find nothing (0002.D1, 0002.D3).
func journalKept(dir string) error {
	found := false
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			found = true
			return fs.SkipAll
		}
		return nil
	})
	if !found {
		return fmt.Errorf("the run journals, but journal_dir %s holds no file after it: keep the step journal in the directory the run message names (docs/protocol.md, Crash and resume; 0002.D1)", dir)
	}
	return nil
}
