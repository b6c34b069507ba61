package fakes

import (
	"context"
	"sync"
	"time"
)

// RunContext returns the context a runner gives a run, and the two ways
// the run's caller can end it: cancel, as a lost lease does
// (context.Canceled), and expire, as a deadline passing does
// (context.DeadlineExceeded). The design treats both alike (0004.D4,
// 0008.D4.cancelled), so a kernel that recognises only one of the two
// errors shows in a scenario with faults.deadline. The context's
// deadline is its parent's: expire stands for a deadline the runner
// cannot set ahead of time, because it must pass while a given call is in
// flight.
func RunContext(parent context.Context) (ctx context.Context, cancel, expire func()) {
	c := &runCtx{parent: parent, done: make(chan struct{})}
	stop := context.AfterFunc(parent, func() { c.end(parent.Err()) })
	cancel = func() { stop(); c.end(context.Canceled) }
	expire = func() { stop(); c.end(context.DeadlineExceeded) }
	return c, cancel, expire
}

// runCtx is a context with its own done channel, so the error it ends
// with reaches the contexts derived from it (they ask Err when Done is
// closed), whichever of the two ends it.
type runCtx struct {
	parent context.Context
	done   chan struct{}
	mu     sync.Mutex
	err    error
}

func (c *runCtx) Deadline() (time.Time, bool) { return c.parent.Deadline() }
func (c *runCtx) Done() <-chan struct{}       { return c.done }
func (c *runCtx) Value(key any) any           { return c.parent.Value(key) }

func (c *runCtx) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (c *runCtx) end(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		c.err = err
		close(c.done)
	}
}
