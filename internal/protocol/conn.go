package protocol

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
)

// Peer is one implementation process as an Exchange sees it: the
// messages both ways, and the kill a scripted crash asks for.
type Peer interface {
	// Send writes one of the runner's messages.
	Send(m *Message) error
	// Next waits for the implementation's next message; waitingFor says
	// what the runner expects, for the error when nothing comes.
	Next(ctx context.Context, waitingFor string) (*Message, error)
	// Kill ends the process at once; a second Kill does nothing.
	Kill()
}

// Conn carries the JSON lines between the runner and one implementation
// process: it writes the runner's messages and hands out the
// implementation's, each decoded and checked by its type (Decode).
type Conn struct {
	w      io.Writer
	lines  chan lineResult
	wmu    sync.Mutex // one message written at a time
	tmu    sync.Mutex // guards tap, apart from wmu: a write blocked on a full pipe must not stop the reader
	tap    func(from string, line []byte)
	status func() string
}

type lineResult struct {
	line []byte
	err  error
}

// NewConn writes the runner's messages to w. status, when the
// implementation closes its stdout, says how the process ended. The
// implementation's lines come from Receive.
func NewConn(w io.Writer, status func() string) *Conn {
	return &Conn{w: w, lines: make(chan lineResult, 16), status: status}
}

// Receive reads the implementation's lines from r until it ends, for
// Next; run it in a goroutine of its own.
func (c *Conn) Receive(r io.Reader) {
	defer close(c.lines)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), MaxLineBytes)
	for sc.Scan() {
		c.lines <- lineResult{line: append([]byte(nil), sc.Bytes()...)}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			err = fmt.Errorf("the implementation wrote a line longer than %d bytes (is it flooding stdout?)", MaxLineBytes)
		}
		c.lines <- lineResult{err: err}
	}
}

// Tap gives every line from now on, both ways, to f ("runner" or
// "implementation", and the line as written); nil stops it. Set it
// while no exchange uses the connection.
func (c *Conn) Tap(f func(from string, line []byte)) {
	c.tmu.Lock()
	c.tap = f
	c.tmu.Unlock()
}

func (c *Conn) tapped() func(from string, line []byte) {
	c.tmu.Lock()
	defer c.tmu.Unlock()
	return c.tap
}

// Send implements Peer.
func (c *Conn) Send(m *Message) error {
	line, err := Encode(m)
	if err != nil {
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if tap := c.tapped(); tap != nil {
		tap("runner", line)
	}
	if _, err := c.w.Write(line); err != nil {
		return fmt.Errorf("write to the implementation's stdin: %w (did it exit?)", err)
	}
	return nil
}

// Next implements Peer.
func (c *Conn) Next(ctx context.Context, waitingFor string) (*Message, error) {
	select {
	case lr, ok := <-c.lines:
		if !ok {
			return nil, fmt.Errorf("the implementation closed its stdout (%s) while the runner waited for %s", c.status(), waitingFor)
		}
		if lr.err != nil {
			return nil, lr.err
		}
		if tap := c.tapped(); tap != nil {
			tap("implementation", lr.line)
		}
		return Decode(lr.line)
	case <-ctx.Done():
		return nil, fmt.Errorf("no answer while the runner waited for %s: %w", waitingFor, ctx.Err())
	}
}

// Drain discards the implementation's lines until its stdout ends: after
// a kill, once the process is gone.
func (c *Conn) Drain() {
	for range c.lines {
	}
}
