package refdriver

import (
	"errors"
	"sync"

	"github.com/polyloop/polyloop-conform/reference/journal"
	"github.com/polyloop/polyloop-conform/scenarios"
)

// ErrCrash is what the crash injector returns at its point: the kernel must
// stop writing at once, as a killed process would.
var ErrCrash = errors.New("refdriver: injected crash")

// CrashInjector is a journal hook that "kills" the run at one write point
// and records every point it saw.
type CrashInjector struct {
	// Match selects the crash point; nil never crashes.
	Match func(journal.Point) bool
	// Kill, when set, is called at the crash point instead of returning
	// ErrCrash.
	Kill func(journal.Point)

	mu    sync.Mutex
	seen  []journal.Point
	fired *journal.Point
}

// ForSpec returns an injector for a scenario's crash fault.
func ForSpec(c *scenarios.CrashSpec) *CrashInjector {
	return &CrashInjector{Match: func(p journal.Point) bool { return c.Matches(p.When, p.Record, p.Step) }}
}

// AtIndex returns an injector that crashes at the n-th point (0-based).
func AtIndex(n int) *CrashInjector {
	ci := &CrashInjector{}
	ci.Match = func(journal.Point) bool { return len(ci.seen)-1 == n }
	return ci
}

// Hook is the journal.Hook to install.
func (c *CrashInjector) Hook(p journal.Point) error {
	c.mu.Lock()
	c.seen = append(c.seen, p)
	hit := c.fired == nil && c.Match != nil && c.Match(p)
	if hit {
		pp := p
		c.fired = &pp
	}
	c.mu.Unlock()
	if !hit {
		return nil
	}
	if c.Kill != nil {
		c.Kill(p)
	}
	return ErrCrash
}

// Fired returns the point the injector crashed at, if any.
func (c *CrashInjector) Fired() (journal.Point, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fired == nil {
		return journal.Point{}, false
	}
	return *c.fired, true
}

// Seen returns every point passed so far.
func (c *CrashInjector) Seen() []journal.Point {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]journal.Point(nil), c.seen...)
}
