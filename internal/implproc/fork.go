package implproc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/polyloop/polyloop-conform/internal/protocol"
)

// errServerGone is a fork request the fork server did not answer.
var errServerGone = errors.New("the fork server did not answer")

// fork asks the fork server for a new process: the runner makes three
// named pipes, the server forks a child that takes them as its stdin,
// stdout and stderr in a process group of its own, and says its pid. The
// child then shakes hands like any new process. A child of a server that
// holds no run state is as good as a new process for crash safety: only
// the journal on disk crosses a kill (docs/protocol.md, "Fork server").
func (c *Client) fork(tr *transcript, server **child) (*child, error) {
	return c.forkOn(tr, server, nil)
}

// forkOn is fork, asking for a child on a new machine when machine is set
// (docs/protocol.md, Fork server): the pid the server says is then the
// process on that machine, in a PID namespace below the server's.
func (c *Client) forkOn(tr *transcript, server **child, machine *protocol.Machine) (*child, error) {
	dir, err := os.MkdirTemp(c.Volume(), "polyloop-fork-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	fifos, err := openFifos(dir)
	if err != nil {
		return nil, err
	}
	hctx, cancel := context.WithTimeout(c.baseContext(), c.handshakeLimit())
	defer cancel()
	m, err := c.askFork(hctx, server, fifos.paths, machine)
	switch {
	case err != nil:
		fifos.release()
		return nil, err
	case m.Type == protocol.TypeError:
		fifos.release()
		return nil, fmt.Errorf("fork server: the implementation could not fork: %s", m.Message)
	case m.Type != protocol.TypeForked || m.Pid <= 0:
		fifos.release()
		return nil, fmt.Errorf("fork server: the implementation answered fork with %q and no pid", m.Type)
	}
	pid, err := c.hostPid(server, m.Pid, machine != nil)
	if err != nil {
		fifos.release()
		return nil, err
	}
	if err := fifos.wait(hctx, pid, c.handshakeLimit()); err != nil {
		return nil, err
	}
	logs := &stderrWriter{c: c}
	go func() {
		io.Copy(logs, fifos.files[2])
		fifos.files[2].Close()
	}()
	return c.handshake(newChild(nil, pid, fifos.files[0], fifos.files[1], logs), tr)
}

// askFork sends the fork server a fork and reads its answer, one request
// at a time; errServerGone when the server is gone or does not answer.
func (c *Client) askFork(ctx context.Context, server **child, paths [3]string, machine *protocol.Machine) (*protocol.Message, error) {
	c.forkMu.Lock()
	defer c.forkMu.Unlock()
	zygote := *server
	if zygote == nil {
		return nil, errServerGone
	}
	err := zygote.Send(&protocol.Message{Type: protocol.TypeFork, Stdin: paths[0], Stdout: paths[1], Stderr: paths[2], Machine: machine})
	var m *protocol.Message
	if err == nil {
		m, err = zygote.Next(ctx, "its forked message")
	}
	if err != nil {
		return nil, fmt.Errorf("fork server: %w: %w", errServerGone, err)
	}
	return m, nil
}

// fifos are a forked child's stdin, stdout and stderr as named pipes,
// each being opened by a goroutine of its own: opening a named pipe
// waits for the other end.
type fifos struct {
	paths [3]string
	modes [3]int
	done  [3]chan opened
	files [3]*os.File
}

type opened struct {
	f   *os.File
	err error
}

// openFifos makes the three named pipes in dir and starts opening them
// (stdin to write, stdout and stderr to read).
func openFifos(dir string) (*fifos, error) {
	p := &fifos{
		paths: [3]string{filepath.Join(dir, "stdin"), filepath.Join(dir, "stdout"), filepath.Join(dir, "stderr")},
		modes: [3]int{os.O_WRONLY, os.O_RDONLY, os.O_RDONLY},
	}
	for _, path := range p.paths {
		if err := syscall.Mkfifo(path, 0o600); err != nil {
			return nil, fmt.Errorf("fork server: %w", err)
		}
	}
	for i := range p.paths {
		p.done[i] = make(chan opened, 1)
		go func() {
			f, err := os.OpenFile(p.paths[i], p.modes[i], 0)
			p.done[i] <- opened{f, err}
		}()
	}
	return p, nil
}

// wait takes the three pipes once the forked child pid opened its ends,
// or kills its group when it does not within limit.
func (p *fifos) wait(ctx context.Context, pid int, limit time.Duration) error {
	for i := range p.paths {
		select {
		case o := <-p.done[i]:
			if o.err != nil {
				p.release()
				return fmt.Errorf("fork server: open %s: %w", p.paths[i], o.err)
			}
			p.files[i] = o.f
		case <-ctx.Done():
			syscall.Kill(-pid, syscall.SIGKILL)
			p.release()
			return fmt.Errorf("fork server: the forked process %d did not open its pipes within %s (--handshake-timeout)", pid, limit)
		}
	}
	return nil
}

// release closes the pipes taken, and frees each goroutine still opening
// one by opening its other end here, when the child never comes.
func (p *fifos) release() {
	for i := range p.paths {
		if p.files[i] != nil {
			p.files[i].Close()
			continue
		}
		other := os.O_RDONLY | syscall.O_NONBLOCK
		if p.modes[i] == os.O_RDONLY {
			other = os.O_WRONLY | syscall.O_NONBLOCK
		}
		if f, err := os.OpenFile(p.paths[i], other, 0); err == nil {
			if o := <-p.done[i]; o.f != nil {
				o.f.Close()
			}
			f.Close()
		}
	}
}
