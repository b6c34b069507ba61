package implproc

import (
	"bytes"
	"fmt"
	"sync"
)

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
	// The tail may grow to twice its bound before its start is dropped, in
	// place: a chatty implementation writing line by line then costs one
	// 64 KiB move per 64 KiB written, not one per line.
	h.tail = append(h.tail, p...)
	if over := len(h.tail) - maxStderr; over >= maxStderr {
		h.cut += int64(over)
		h.tail = h.tail[:copy(h.tail, h.tail[over:])]
	}
}

func (h *headTail) String() string {
	tail, cut := h.tail, h.cut
	if over := len(tail) - maxStderr; over > 0 {
		tail, cut = tail[over:], cut+int64(over)
	}
	if cut == 0 {
		return string(h.head) + string(tail)
	}
	return fmt.Sprintf("%s\n[… %d bytes cut …]\n%s", h.head, cut, tail)
}
