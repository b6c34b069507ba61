package implproc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/polyloop/polyloop-conform/internal/isolate"
	"github.com/polyloop/polyloop-conform/internal/protocol"
)

// child is one implementation process: started from Command (cmd), or
// forked by the implementation's fork server (pid, its own process group).
// Its Conn carries the messages; Kill ends its process group.
type child struct {
	*protocol.Conn
	cmd   *exec.Cmd
	pid   int // a forked child's; 0 for one the runner started
	stdin io.Closer
	exit  chan struct{}
	logs  *stderrWriter
	// hello holds the handshake's two lines, replayed at the top of every
	// transcript this process serves so that each one stands alone.
	hello [][]byte
	// used is set once the process was sent a run.
	used bool
	// resumer is set on a process that resumed a run (spawnResume).
	resumer bool
	// machine is set on a process started on a machine of its own
	// (internal/isolate, or a fork server's child seen on one), in a PID
	// namespace: killing it kills every process it started. parts lists
	// the parts its machine has.
	machine bool
	parts   []string
	// view is what the runner saw of a forked child's machine of its
	// own (spawnMachine); nil for any other process.
	view *isolate.View
	// own is a fork server's own machine (seen), read once.
	own      *isolate.View
	ownErr   error
	seenOnce sync.Once
	once     sync.Once
}

// newChild makes a child that writes to stdin and reads from stdout;
// cmd or pid say which process it is.
func newChild(cmd *exec.Cmd, pid int, stdin io.WriteCloser, stdout io.Reader, logs *stderrWriter) *child {
	ch := &child{cmd: cmd, pid: pid, stdin: stdin, exit: make(chan struct{}), logs: logs}
	ch.Conn = protocol.NewConn(stdin, ch.exitStatus)
	// The handshake's lines are kept for the transcripts (attach).
	ch.Tap(func(_ string, line []byte) { ch.hello = append(ch.hello, line) })
	go func() {
		ch.Receive(stdout)
		if c, ok := stdout.(io.Closer); ok && pid != 0 {
			c.Close() // a forked child's named pipe
		}
	}()
	return ch
}

// spawn starts a process and shakes hands, within the handshake limit and
// the runner's context (not a scenario's deadline): a fork of the fork
// server when there is one, a new process otherwise, whose machine carries
// the volume (Volume), where its runs' journal_dirs will be made.
func (c *Client) spawn(tr *transcript) (*child, error) {
	return c.spawnVia(tr, &c.zygote)
}

// spawnVia forks from the fork server *server when there is one, else
// starts a new process (start).
func (c *Client) spawnVia(tr *transcript, server **child) (*child, error) {
	c.forkMu.Lock()
	zygote := *server
	c.forkMu.Unlock()
	if zygote != nil {
		ch, err := c.fork(tr, server)
		if !errors.Is(err, errServerGone) {
			return ch, err
		}
		c.dropServer(server, zygote, err)
	}
	return c.start(tr)
}

// dropServer forgets the fork server zygote, gone (err): it says so once,
// and processes are started from the command line from now on.
func (c *Client) dropServer(server **child, zygote *child, err error) {
	c.forkMu.Lock()
	if *server == zygote {
		*server = nil
		c.problem("the implementation's fork server stopped (%v); every later process was started from --impl instead", err)
	}
	c.forkMu.Unlock()
	zygote.Kill()
}

// spawnResume starts the process that resumes a stopped run, whose
// journal_dir is journalDir, in the directory journal. Where the machine
// isolates processes (internal/isolate), it is a child forked onto a
// machine of its own and seen so (resumeOnMachine), or else a new process
// on a new machine that carries journal and nothing else of the runner's:
// a fork server's plain children share its machine, so a plain fork would
// see the files, the /dev/shm, the sockets and the daemons a crashed
// sibling left, as a process after a reboot would not. Without isolation,
// it is never a child of the fork server that forked the stopped one:
// memory a server maps shared before forking reaches every child it
// forks. Resumes are then forked from a second server, started from
// --impl the first time it is needed, and a resumed child runs nothing
// else (put).
func (c *Client) spawnResume(tr *transcript, journal, journalDir string, stopped *child) (*child, error) {
	if ch, ok, err := c.resumeOnMachine(tr, journalDir, stopped); ok || err != nil {
		return ch, err
	}
	c.forkMu.Lock()
	if c.zygote == nil || (c.isolates() && c.Command != nil) {
		c.forkMu.Unlock()
		ch, err := c.startOn(tr, isolate.Options{Carry: []string{journal}, Mask: []string{c.Volume()}})
		if ch != nil {
			ch.resumer = true
		}
		return ch, err
	}
	if c.resumer == nil && !c.resumerTried {
		c.resumerTried = true
		if ch, err := c.start(nil); err == nil {
			c.resumer = ch
		}
	}
	c.forkMu.Unlock()
	ch, err := c.spawnVia(tr, &c.resumer)
	if ch != nil {
		ch.resumer = true
	}
	return ch, err
}

// start starts a new process from Command that may run first runs: its
// machine carries the volume, where their journal_dirs will be made.
func (c *Client) start(tr *transcript) (*child, error) {
	return c.startOn(tr, isolate.Options{Carry: []string{c.Volume()}})
}

// startOn starts a new process from Command, on a new machine built as o
// says (with Carry too) where the kernel allows, and shakes hands.
func (c *Client) startOn(tr *transcript, o isolate.Options) (*child, error) {
	if c.Command == nil {
		return nil, errors.New("no command to start the implementation from")
	}
	cmd := c.Command()
	cmd.SysProcAttr = processAttr()
	var m *isolate.Machine
	level := c.refusals()
	if c.isolates() {
		wo := o
		wo.Carry, wo.NoUserNS = append(append(slices.Clip(o.Carry), c.Carry...), c.Shared...), level > 0
		wo.Syncs = c.Syncs
		m = isolate.Wrap(cmd, wo)
	}
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
	if m != nil {
		err = m.Start()
	} else {
		err = cmd.Start()
	}
	if err != nil {
		if m != nil {
			// The kernel refused the namespaces (no privileges, or
			// user namespaces off): say so once, and start every
			// process with fewer of them from now on.
			c.refused(level, err)
			return c.startOn(tr, o)
		}
		return nil, fmt.Errorf("start the implementation %q: %w", strings.Join(cmd.Args, " "), err)
	}
	c.noteSyncs(m)
	ch := newChild(cmd, 0, stdin, stdout, logs)
	if m != nil {
		ch.machine, ch.parts = true, m.Parts()
		c.partsMissing(isolate.Missing(ch.parts))
		if len(c.Shared) > 0 {
			// A directory every machine carries (--carry, asked for: no
			// problem of the run) is a disk they share.
			ch.parts = slices.DeleteFunc(ch.parts, func(p string) bool { return p == isolate.PartFiles })
		}
	}
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
	hctx, cancel := context.WithTimeout(c.baseContext(), limit)
	defer cancel()
	if err := ch.Send(&protocol.Message{Type: protocol.TypeHello, Suite: "polyloop-conform", SuiteVersion: protocol.SuiteVersion, Protocol: protocol.Version}); err != nil {
		ch.Kill()
		return nil, err
	}
	m, err := ch.Next(hctx, "its hello")
	if err != nil {
		ch.Kill()
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("handshake: no hello within %s (--handshake-timeout): %w", limit, err)
		}
		return nil, fmt.Errorf("handshake: %w", err)
	}
	if m.Type != protocol.TypeHello {
		ch.Kill()
		return nil, fmt.Errorf("handshake: the implementation answered %q instead of hello", m.Type)
	}
	if m.Protocol != protocol.Version {
		ch.Kill()
		return nil, fmt.Errorf("handshake: the implementation speaks protocol %d, this runner speaks %d", m.Protocol, protocol.Version)
	}
	if c.hello == nil {
		c.hello = m
	}
	ch.attach(tr)
	return ch, nil
}

// attach starts recording this process's exchange into tr, handshake first.
func (ch *child) attach(tr *transcript) {
	ch.Tap(tr.add)
	tr.add("runner", ch.hello[0])
	tr.add("implementation", ch.hello[1])
}

func (ch *child) exitStatus() string {
	if ch.cmd == nil && ch.pid == 0 {
		return "no process of its own: its pipe closed"
	}
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

// Kill ends the whole process group, so a shell wrapper's children die
// too, once (protocol.Peer).
func (ch *child) Kill() {
	ch.once.Do(ch.kill)
}

func (ch *child) kill() {
	defer func() {
		// A fork server's machine, if read, is let go; if not, it never
		// will be.
		ch.seenOnce.Do(func() { ch.ownErr = errors.New("the fork server was killed") })
		ch.own.Release()
	}()
	g := ch.group()
	if g == 0 {
		// No process of its own (served in process, over pipes): the
		// end of its input ends it.
		ch.stdin.Close()
		ch.Drain()
		return
	}
	syscall.Kill(-g, syscall.SIGKILL)
	ch.stdin.Close()
	if ch.pid != 0 {
		// A forked child is the fork server's to reap; its stdout ends
		// when it dies.
		ch.Drain()
		return
	}
	select {
	case <-ch.exit:
	default:
		ch.cmd.Wait()
	}
	ch.Drain()
}

// isolates reports whether new processes are started on machines of
// their own: not with Isolation off, not once the kernel refused every
// namespace.
func (c *Client) isolates() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.NoIsolation && c.refusedAt < 2 && !isolate.Forced()
}

// refusals counts the kernel's refusals so far (Client.refusedAt).
func (c *Client) refusals() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.refusedAt
}

// refused records the kernel's refusal of a start at level: the next
// start builds the machine without a user namespace, then without any.
func (c *Client) refused(level int, err error) {
	c.mu.Lock()
	first := c.refusedAt == level
	if first {
		c.refusedAt = level + 1
	}
	c.mu.Unlock()
	if !first {
		return
	}
	if level == 0 {
		c.problem("the kernel refused a user namespace (%v): machines are built without one, with the runner's privileges (docs/limits.md, Isolation)", err)
		return
	}
	c.problem("processes were started without isolation: the kernel refused new PID, mount, network and IPC namespaces (%v); a resume is then not isolated and --require observed fails it (docs/limits.md, Isolation)", err)
}

// partsMissing reports, once per distinct set, the parts a process's
// machine was built without.
func (c *Client) partsMissing(missing []string) {
	set := strings.Join(missing, ", ")
	c.mu.Lock()
	first := set != "" && set != c.missing
	c.missing = set
	c.mu.Unlock()
	if first {
		c.problem("processes were started on machines without: %s (the kernel refused them; see the implementation's log); a resume on such a machine is not isolated in those parts and --require observed fails it (docs/limits.md, Isolation)", set)
	}
}

// noteSyncs keeps why a process started on m (nil: on no machine) makes
// syncfs and sync calls the runner does not hear of, when Syncs wants them.
func (c *Client) noteSyncs(m *isolate.Machine) {
	why := ""
	switch {
	case c.Syncs == nil:
		return
	case m == nil:
		why = "its processes run on no machine of their own (isolation off or refused), whose init would stop those calls for the runner"
	case !m.SyncsObserved():
		why = "the machine's init could not install its seccomp filter (the implementation's log says why)"
	default:
		return
	}
	c.mu.Lock()
	if c.syncsLost == "" {
		c.syncsLost = why
	}
	c.mu.Unlock()
}

// SyncsUnobserved says why some process's syncfs and sync calls were not
// told to Syncs, or "" when every process's were.
func (c *Client) SyncsUnobserved() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.syncsLost
}

// hostPid is the runner's number for the process the fork server *server
// reported as pid: a server in a PID namespace of its own (isolated) sees
// its children under other numbers, and signalling that number here would
// reach an unrelated process group.
func (c *Client) hostPid(server **child, pid int, onMachine bool) (int, error) {
	c.forkMu.Lock()
	zygote := *server
	c.forkMu.Unlock()
	if zygote == nil || zygote.cmd == nil || zygote.cmd.Process == nil || (!onMachine && !zygote.machine) {
		return pid, nil
	}
	host, err := isolate.HostPidOf(zygote.cmd.Process.Pid, pid)
	if err != nil {
		return 0, fmt.Errorf("fork server: the forked process %d: %w", pid, err)
	}
	return host, nil
}
