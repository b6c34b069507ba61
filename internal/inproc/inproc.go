// Package inproc is the engine's Driver for a Go kernel in the test's own
// process: each "process" the runner would start is a polyloopkit.Serve
// session on in-memory pipes, so the kernel is judged through the same
// protocol.Exchange (the same answers from the fakes, the same checks
// against the wire) as a command line, without a process or a stdio
// adapter. A kill ends the session's input; the kit then parks the
// kernel's goroutine at its next call, so it writes nothing more.
//
// What a process gives and a goroutine cannot: a session resumed in the
// test's process shares its memory with the one that was killed, so
// Driver.Resumer runs every resume in a process of its own (the test
// binary serving the same kernel over stdio); without it the resume is
// in process and reported not isolated (its verdict rests on the kernel's
// word). A goroutine the kernel started itself, or a kernel that ignores
// its timeout, keeps running after the kill.
package inproc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/polyloop/polyloop-conform/fakes"
	"github.com/polyloop/polyloop-conform/internal/implproc"
	"github.com/polyloop/polyloop-conform/internal/protocol"
	"github.com/polyloop/polyloop-conform/polyloopkit"
	"github.com/polyloop/polyloop-conform/scenarios"
	"github.com/polyloop/polyloop-conform/trajectories"
)

// Driver runs scenarios on a kit Kernel in process.
type Driver struct {
	Kernel polyloopkit.Kernel
	// Resumer, when set, starts the processes that resume a stopped run
	// (implproc.Client.ResumeOn); nil resumes in process.
	Resumer *implproc.Client
	hello   *protocol.Message
	// base is the runner's context, from Start: when it ends (a signal),
	// every exchange stops and its session is killed.
	base context.Context
}

// Start shakes hands with one session, so Name and Capabilities come
// from the kernel's own hello.
func (d *Driver) Start(ctx context.Context) error {
	d.base = ctx
	s, err := d.spawn(ctx)
	if err != nil {
		return err
	}
	s.Kill()
	return nil
}

// Name implements engine.Driver.
func (d *Driver) Name() string {
	if d.hello == nil {
		return "implementation (not started)"
	}
	return fmt.Sprintf("%s %s (spec %s, in process through polyloopkit)", d.hello.Name, d.hello.Version, d.hello.SpecVersion)
}

// Capabilities implements engine.Driver.
func (d *Driver) Capabilities() []string {
	if d.hello == nil {
		return nil
	}
	return d.hello.Capabilities
}

// Problems are the runner's own failures while resuming (a fork server
// that stopped, a transcript not written).
func (d *Driver) Problems() []string {
	if d.Resumer == nil {
		return nil
	}
	return d.Resumer.Problems()
}

// Run implements engine.Driver.
func (d *Driver) Run(ctx context.Context, sc *scenarios.Scenario, env *fakes.Env) (*trajectories.Trajectory, error) {
	return d.runWith(ctx, sc, env, protocol.RunOptions{})
}

func (d *Driver) runWith(ctx context.Context, sc *scenarios.Scenario, env *fakes.Env, o protocol.RunOptions) (*trajectories.Trajectory, error) {
	wait, cancel := d.waitContext(ctx)
	defer cancel()
	x, err := protocol.NewExchange(ctx, wait, sc, env, d.Capabilities(), o)
	if err != nil {
		return nil, err
	}
	defer x.Close()
	s, err := d.spawn(wait)
	if err != nil {
		return nil, err
	}
	running := &current{s: s}
	defer context.AfterFunc(wait, running.kill)()
	out, err := x.Run(s)
	s.Kill()
	if err != nil || (x.Killed() && o.KillOnly) {
		return nil, err
	}
	if seq, ok := x.TearsBefore(); ok {
		record, err := protocol.TornRecord(ctx, sc, seq, "", d.runWith)
		if err != nil {
			return nil, err
		}
		x.SetTornRecord(record)
	}
	if d.Resumer != nil {
		resume, err := x.Resumes(out)
		if err != nil || !resume {
			return out, err
		}
		return d.Resumer.ResumeOn(wait, x, sc, env)
	}
	for {
		resume, err := x.Resumes(out)
		if err != nil || !resume {
			return out, err
		}
		// A new session resumes; it shares this process's memory with the
		// one that stopped, which no kill clears.
		env.ResumeNotIsolated()
		next, err := d.spawn(wait)
		if err != nil {
			return nil, fmt.Errorf("start the resuming session: %w", err)
		}
		running.set(next)
		out, err = x.Resume(next)
		next.Kill()
		if err != nil {
			return nil, err
		}
		if out != nil || !x.Killed() {
			return x.Resumed(out)
		}
		// Killed again (faults.crash_on_resume): a third session resumes.
	}
}

// waitContext ends an exchange at ctx's deadline, or when the runner
// stops (the base context, a signal): the engine cancels ctx itself when a
// fake blocks, and the exchange must go on until the kernel reports its
// cancelled run.
func (d *Driver) waitContext(ctx context.Context) (context.Context, context.CancelFunc) {
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(10 * time.Minute)
	}
	wait, cancel := context.WithDeadline(context.WithoutCancel(ctx), deadline)
	if d.base == nil {
		return wait, cancel
	}
	stop := context.AfterFunc(d.base, cancel)
	return wait, func() { stop(); cancel() }
}

// current is the session a scenario runs on, killed at the deadline.
type current struct {
	mu sync.Mutex
	s  *session
}

func (c *current) set(s *session) { c.mu.Lock(); c.s = s; c.mu.Unlock() }
func (c *current) kill()          { c.mu.Lock(); c.s.Kill(); c.mu.Unlock() }

// session is one Serve of the kernel, as a protocol.Peer.
type session struct {
	*protocol.Conn
	toKit   *io.PipeWriter
	fromKit *io.PipeReader
	once    sync.Once
	mu      sync.Mutex
	ended   error // what Serve returned
}

var errKilled = errors.New("killed by the runner")

// spawn starts a session and shakes hands with it.
func (d *Driver) spawn(ctx context.Context) (*session, error) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := &session{toKit: inW, fromKit: outR}
	s.Conn = protocol.NewConn(inW, s.status)
	go s.Receive(outR)
	go func() {
		err := polyloopkit.Serve(context.Background(), d.Kernel, inR, outW)
		s.mu.Lock()
		s.ended = err
		s.mu.Unlock()
		outW.CloseWithError(io.EOF)
	}()
	hctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := s.Send(&protocol.Message{Type: protocol.TypeHello, Suite: "polyloop-conform", SuiteVersion: protocol.SuiteVersion, Protocol: protocol.Version}); err != nil {
		s.Kill()
		return nil, err
	}
	m, err := s.Next(hctx, "its hello")
	switch {
	case err != nil:
		s.Kill()
		return nil, fmt.Errorf("handshake: %w", err)
	case m.Type != protocol.TypeHello:
		s.Kill()
		return nil, fmt.Errorf("handshake: the kernel answered %q instead of hello", m.Type)
	}
	if d.hello == nil {
		d.hello = m
	}
	return s, nil
}

func (s *session) status() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended != nil {
		return "polyloopkit.Serve returned: " + s.ended.Error()
	}
	return "polyloopkit.Serve returned"
}

// Kill implements protocol.Peer: the session's input ends and its output
// breaks, so the kernel's goroutine parks at its next call.
func (s *session) Kill() {
	s.once.Do(func() {
		s.toKit.Close()
		s.fromKit.CloseWithError(errKilled)
		go s.Drain()
	})
}
