package implproc

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/polyloop/polyloop-conform/internal/isolate"
	"github.com/polyloop/polyloop-conform/internal/protocol"
)

// errNotSeen is a forked child the runner did not see on a machine of its
// own: it is killed, and the process is started from --impl instead.
var errNotSeen = errors.New("not seen on a new machine")

// goneLimit bounds the wait for a killed machine's processes to be gone.
const goneLimit = 2 * time.Second

// forksMachines reports whether a process that journals may be forked
// onto a machine of its own (docs/protocol.md, Fork server): where the
// runner isolates processes, has a fork server, and has not yet seen a
// fork server ignore or fall short of the machine it asked for.
func (c *Client) forksMachines() bool {
	c.mu.Lock()
	refused := c.machinesRefused
	c.mu.Unlock()
	c.forkMu.Lock()
	zygote := c.zygote
	c.forkMu.Unlock()
	return zygote != nil && !refused && c.isolates()
}

// machineRefused records that a fork server's child was not seen on a
// new machine, says so once on the logs, and stops asking for machines:
// each refused one costs a fork and a kill. Every later resume is then
// started from --impl in namespaces of its own, and a run that journals
// is forked as any other first run.
func (c *Client) machineRefused(why error) {
	c.mu.Lock()
	first := !c.machinesRefused
	c.machinesRefused = true
	c.mu.Unlock()
	if first && c.Logs != nil {
		fmt.Fprintf(c.Logs, "polyloop-conform: a child of the implementation's fork server was %v; every resume is started from --impl instead (docs/protocol.md, Fork server)\n", why)
	}
}

// spawnMachine forks a child of *server on a new machine with journalDir
// bound through, and checks it from outside once it said hello: its
// namespaces differ from the server's and from each of others' (the
// process that stopped), its root is an overlay, its /proc and /dev/shm
// are fresh, journalDir is a mount of its own, each directory of mask is
// hidden, and it shares no writable memory with the processes near its
// server (isolate.View.NotSeen, isolate.SharedNear). A child not seen so
// is killed, and errNotSeen returned.
func (c *Client) spawnMachine(tr *transcript, server **child, journalDir string, mask []string, others ...*isolate.View) (*child, error) {
	c.forkMu.Lock()
	zygote := *server
	c.forkMu.Unlock()
	if zygote == nil || zygote.cmd == nil || zygote.cmd.Process == nil {
		return nil, fmt.Errorf("%w: no fork server", errNotSeen)
	}
	host, err := zygote.seen()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errNotSeen, err)
	}
	// The journal directory is bound through: it must be there to bind.
	if err := os.MkdirAll(journalDir, 0o700); err != nil {
		return nil, err
	}
	ch, err := c.forkOn(tr, server, &protocol.Machine{JournalDir: journalDir, Mask: mask})
	if err != nil {
		return nil, err
	}
	m, err := isolate.ReadView(ch.pid)
	if err != nil {
		ch.Kill()
		return nil, fmt.Errorf("%w: %w", errNotSeen, err)
	}
	near, err := isolate.SharedNear(zygote.cmd.Process.Pid, ch.pid)
	if err != nil {
		m.Release()
		ch.Kill()
		return nil, fmt.Errorf("%w: %w", errNotSeen, err)
	}
	if missing := m.NotSeen(journalDir, mask, append([]*isolate.View{host, near}, others...)...); len(missing) > 0 {
		m.Release()
		ch.Kill()
		return nil, fmt.Errorf("%w: its %s not isolated", errNotSeen, strings.Join(missing, ", "))
	}
	ch.view = m
	ch.machine, ch.parts = true, isolate.AllParts()
	return ch, nil
}

// firstOnMachine is the process for a run that journals: a child forked
// onto a machine of its own where the runner forks machines, so that the
// tree of a process the run kills can be seen gone before its resume;
// otherwise one from the pool.
func (c *Client) firstOnMachine(tr *transcript, journalDir string) (*child, error) {
	if journalDir == "" || !c.forksMachines() {
		return c.get(tr)
	}
	c.forkMu.Lock()
	zygote := c.zygote
	c.forkMu.Unlock()
	ch, err := c.spawnMachine(tr, &c.zygote, journalDir, c.machineMask())
	switch {
	case errors.Is(err, errNotSeen):
		c.machineRefused(err)
		return c.get(tr)
	case errors.Is(err, errServerGone):
		c.dropServer(&c.zygote, zygote, err)
		return c.get(tr)
	}
	return ch, err
}

// resumeOnMachine forks the process that resumes a run onto a machine of
// its own, from the second server (never the one that forked the process
// that stopped: memory a server maps shared before forking reaches every
// child). It is used only when the stopped process ran on a machine of
// its own whose every process is seen gone, and the new one is seen on a
// new machine; otherwise ok is false and the caller starts the resume
// from --impl.
func (c *Client) resumeOnMachine(tr *transcript, journalDir string, stopped *child) (_ *child, ok bool, _ error) {
	if stopped == nil || stopped.view == nil || stopped.resumer || !c.forksMachines() {
		// A stopped resume was forked from the second server: what it
		// wrote in memory that server mapped shared reaches every child
		// of it, so the next resume is started from --impl.
		return nil, false, nil
	}
	stopped.Kill() // the resume starts after the kill, as after a crash
	if !stopped.view.Gone(goneLimit) {
		c.machineRefused(fmt.Errorf("%w: the stopped process's PID namespace still had processes %s after its kill", errNotSeen, goneLimit))
		return nil, false, nil
	}
	c.forkMu.Lock()
	if c.resumer == nil && !c.resumerTried {
		c.resumerTried = true
		if ch, err := c.start(nil); err == nil {
			c.resumer = ch
		}
	}
	c.forkMu.Unlock()
	c.forkMu.Lock()
	resumer := c.resumer
	c.forkMu.Unlock()
	ch, err := c.spawnMachine(tr, &c.resumer, journalDir, c.machineMask(), stopped.view)
	switch {
	case errors.Is(err, errNotSeen):
		c.machineRefused(err)
		return nil, false, nil
	case errors.Is(err, errServerGone):
		if resumer != nil {
			c.dropServer(&c.resumer, resumer, err)
		}
		return nil, false, nil
	case err != nil:
		return nil, false, err
	}
	ch.resumer = true
	return ch, true, nil
}

// seen is the fork server's own machine, read once: its namespaces and
// mounts do not move while it lives (what it maps shared is read at each
// fork, SharedNear), and the namespaces stay held until it is killed.
func (ch *child) seen() (*isolate.View, error) {
	ch.seenOnce.Do(func() {
		ch.own, ch.ownErr = isolate.ReadView(ch.cmd.Process.Pid)
	})
	return ch.own, ch.ownErr
}

// machineMask lists the runner's directories a forked machine must hide
// (protocol.Machine.Mask): the volume every journal_dir is made in
// (Volume), carried into the fork servers' machines, so that a forked
// machine sees its own journal (bound through) and no other.
func (c *Client) machineMask() []string { return []string{c.Volume()} }
