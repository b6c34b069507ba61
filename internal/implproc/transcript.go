package implproc

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/polyloop/polyloop-conform/internal/atomicfile"
	"github.com/polyloop/polyloop-conform/scenarios"
)

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
