// Package implproc is the process side of the stdio protocol: it starts
// an implementation's processes (/bin/sh -c in a process group of its
// own) or forks them from its fork server, shakes hands, keeps each
// scenario's share of their stderr and its transcript, kills a process
// group, and ties a process to a scenario's protocol.Exchange in Client,
// the engine's Driver for any implementation.
package implproc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/polyloop/polyloop-conform/fakes"
	"github.com/polyloop/polyloop-conform/internal/isolate"
	"github.com/polyloop/polyloop-conform/internal/protocol"
	"github.com/polyloop/polyloop-conform/scenarios"
	"github.com/polyloop/polyloop-conform/trajectories"
)

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
	// NoIsolation starts every process without namespaces of its own
	// (internal/isolate), as on a machine that refuses them: a resume is
	// then reported as not isolated.
	NoIsolation bool
	// Syncs, when set, is told of every syncfs and sync a process makes,
	// while the process waits, where its machine can stop them
	// (isolate.Options.Syncs); SyncsUnobserved says where it cannot.
	Syncs func(isolate.SyncCall)
	// Carry lists directories, besides the volume, that every process's
	// machine carries at their own paths (a trace strace writes there).
	Carry []string
	// Shared lists directories every machine carries that the user named
	// (run --carry): state crosses from process to process through them,
	// so every machine is reported without its own files.
	Shared []string

	// zygote is the first process when it offers a fork server: it is
	// never sent a run, only fork requests, one at a time (forkMu).
	zygote *child
	// resumer is a second fork server, for the processes that resume a
	// stopped run (spawnResume); resumerTried is set once it was started.
	resumer      *child
	resumerTried bool
	// refusedAt counts the kernel's refusals: 1, no user namespace (the
	// machine is built without one); 2, no namespaces at all.
	refusedAt int
	// volume is the directory every journal_dir and fork pipe is made in
	// (Volume), the one the first processes' machines carry; removed by
	// Close.
	volume    string
	volumeErr error
	// missing is the last set of missing machine parts reported.
	missing string
	// syncsLost says why a process's syncfs and sync went unobserved.
	syncsLost string
	// machinesRefused is set once a fork server's child was not seen on
	// a new machine (spawnMachine).
	machinesRefused bool
	forkMu          sync.Mutex
	// base is the runner's context, from Start: when it is cancelled (a
	// signal), every exchange stops and its process group is killed.
	base  context.Context
	mu    sync.Mutex
	idle  []*child
	hello *protocol.Message
	logMu sync.Mutex
	// stderr keeps each scenario's share of the implementations' stderr;
	// problems are the runner's own failures (a transcript not written).
	stderr   map[string]*headTail
	problems []string
	traces   map[string]string
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

// Start launches one process and completes the handshake, so Name and
// Capabilities are known before any scenario runs.
func (c *Client) Start(ctx context.Context) error {
	c.base = ctx
	ch, err := c.spawn(nil)
	if err != nil {
		c.Close() // the volume it made
		return err
	}
	if slices.Contains(c.Capabilities(), protocol.ForkServer) && !c.NoFork {
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

// Close kills every idle process.
func (c *Client) Close() {
	c.mu.Lock()
	idle := c.idle
	c.idle = nil
	c.mu.Unlock()
	for _, ch := range idle {
		ch.Kill()
	}
	for _, z := range []*child{c.zygote, c.resumer} {
		if z != nil {
			z.Kill()
		}
	}
	c.mu.Lock()
	volume := c.volume
	c.volume, c.volumeErr = "", errors.New("the client is closed")
	c.mu.Unlock()
	// An exchange still under way (the runner was stopped) may make a
	// directory in the volume while it is removed: try again.
	for i := 0; volume != "" && i < 5; i++ {
		if os.RemoveAll(volume) == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Volume is the directory the runner makes every journal_dir and fork
// pipe in, made at the first call: the one directory the machine of a
// process that runs a first run carries (internal/isolate), the journal
// volume. A resuming process's machine carries only its own journal_dir.
// "" when it cannot be made (the system's temporary directory then).
func (c *Client) Volume() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.volume == "" && c.volumeErr == nil {
		c.volume, c.volumeErr = os.MkdirTemp("", "polyloop-vol-*")
		if c.volumeErr != nil {
			c.problems = append(c.problems, fmt.Sprintf("no volume for the journals (%v): they are made in the system's temporary directory, which isolated processes do not see", c.volumeErr))
		}
	}
	return c.volume
}

func (c *Client) put(ch *child) {
	if (c.Fresh && c.hello != nil && ch.used) || ch.resumer || ch.view != nil {
		// A process that resumed a run runs nothing else: with a fork
		// server, what it keeps in shared memory would reach the resumes
		// forked after it. A process on a machine of its own has one
		// run's journal bound through, and no other.
		ch.Kill()
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

// Run implements engine.Driver: it runs sc on an implementation process,
// answering its calls from env.
func (c *Client) Run(ctx context.Context, sc *scenarios.Scenario, env *fakes.Env) (*trajectories.Trajectory, error) {
	return c.RunWith(ctx, sc, env, protocol.RunOptions{})
}

// RunWith is Run with options: the scenario's exchange (protocol.Exchange)
// on a process from the pool, and on a new one where the run is resumed.
func (c *Client) RunWith(ctx context.Context, sc *scenarios.Scenario, env *fakes.Env, o protocol.RunOptions) (*trajectories.Trajectory, error) {
	tr := c.newTranscript(sc.ID)
	defer tr.flush()
	wait, cancel := c.waitContext(ctx)
	defer cancel()
	if o.Volume == "" {
		o.Volume = c.Volume()
	}
	x, err := protocol.NewExchange(ctx, wait, sc, env, c.Capabilities(), o)
	if err != nil {
		return nil, err
	}
	defer x.Close()
	ch, err := c.firstOnMachine(tr, x.JournalDir())
	if err != nil {
		return nil, err
	}
	ch.logs.setScenario(sc.ID)
	defer ch.logs.setScenario("")
	running := &runningChild{ch: ch, all: []*child{ch}}
	defer running.release()
	// When the deadline passes or the runner is stopped, the process
	// group dies at once: a runner blocked writing to an implementation
	// that stopped reading its stdin is freed by the broken pipe, and a
	// signal does not wait for the next message.
	stopKill := context.AfterFunc(wait, running.signal)
	defer stopKill()
	ch.used = true
	out, err := x.Run(ch)
	if err != nil {
		ch.Kill()
		return nil, err
	}
	if !x.Killed() {
		c.put(ch)
	} else if o.KillOnly {
		return nil, nil
	}
	if seq, ok := x.TearsBefore(); ok {
		record, err := protocol.TornRecord(ctx, sc, seq, c.Volume(), c.RunWith)
		if err != nil {
			return nil, err
		}
		x.SetTornRecord(record)
	}
	if resume, err := x.Resumes(out); err != nil || !resume {
		if err != nil {
			return nil, err
		}
		return out, nil
	}
	return c.resume(x, sc, env, tr, running)
}

// resume runs the exchange's resume on a new process, the run's next
// holder.
func (c *Client) resume(x *protocol.Exchange, sc *scenarios.Scenario, env *fakes.Env, tr *transcript, running *runningChild) (*trajectories.Trajectory, error) {
	// The resuming process's machine carries its own journal_dir (the
	// directory transplant made for it) and nothing else of the runner's.
	ch, err := c.spawnResume(tr, filepath.Dir(x.JournalDir()), x.JournalDir(), running.get())
	if err != nil {
		return nil, fmt.Errorf("start the resuming process: %w", err)
	}
	running.set(ch)
	if missing := isolate.Missing(ch.parts); len(missing) > 0 {
		env.ResumeNotIsolated(missing...)
	}
	if ch.view != nil {
		env.ResumeOnMachine()
	}
	ch.logs.setScenario(sc.ID)
	out, err := x.Resume(ch)
	if err != nil {
		ch.Kill()
		return nil, err
	}
	if out == nil && x.Killed() {
		// Killed again (faults.crash_on_resume): a third process resumes
		// the journal this one left, transplanted first by Resumes.
		if _, err := x.Resumes(nil); err != nil {
			return nil, err
		}
		return c.resume(x, sc, env, tr, running)
	}
	c.put(ch)
	return x.Resumed(out)
}

// waitContext is what ends a scenario's exchange. The engine cancels ctx
// when a fake blocks; the exchange must go on until the implementation
// reports its cancelled run, so only the deadline, or the runner itself
// stopping (a signal), ends it.
func (c *Client) waitContext(ctx context.Context) (context.Context, context.CancelFunc) {
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(10 * time.Minute)
	}
	wait, cancel := context.WithDeadline(context.WithoutCancel(ctx), deadline)
	if c.base == nil {
		return wait, cancel
	}
	stop := context.AfterFunc(c.base, cancel)
	return wait, func() { stop(); cancel() }
}

// runningChild is the process a scenario's run is on, for the kill at its
// deadline.
type runningChild struct {
	mu sync.Mutex
	ch *child
	// all are the processes the run was on, in order.
	all []*child
}

func (r *runningChild) set(ch *child) {
	r.mu.Lock()
	r.ch = ch
	r.all = append(r.all, ch)
	r.mu.Unlock()
}

// release lets go of the namespaces held for the run's machines, once no
// resume is compared with them any more.
func (r *runningChild) release() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, ch := range r.all {
		ch.view.Release()
	}
}

func (r *runningChild) get() *child {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ch
}

func (r *runningChild) signal() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ch != nil { // nil before ResumeOn's first process is up
		r.ch.signalGroup()
	}
}
