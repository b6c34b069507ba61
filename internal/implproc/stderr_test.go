package implproc

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
)

// TestStderrKeepsHeadAndTail: a scenario's stderr keeps its first and
// last 64 KiB with a marker counting what was cut between them, and a
// line longer than the limit is cut, not dropped.
func TestStderrKeepsHeadAndTail(t *testing.T) {
	// 150 KB: past the 128 KiB kept, so the middle is cut; 1 MB: the
	// tail's start dropped in place many times over.
	for _, lines := range []int{1500, 10000} {
		c := &Client{}
		w := &stderrWriter{c: c}
		w.setScenario("a.b")
		w.Write([]byte("starting\n"))
		for range lines {
			w.Write([]byte(strings.Repeat("x", 99) + "\n"))
		}
		w.Write([]byte("Traceback (most recent call last):\nValueError: at the end"))
		w.setScenario("")
		got := c.Stderr("a.b")
		if len(got) > 2*maxStderr+100 || !strings.HasPrefix(got, "starting\n") || !strings.HasSuffix(got, "ValueError: at the end\n") {
			t.Errorf("head or tail lost: %q … %q", got[:20], got[len(got)-40:])
		}
		total := len("starting\n") + lines*100 + len("Traceback (most recent call last):\nValueError: at the end\n")
		cut := total - 2*maxStderr
		if marker := "[… " + strconv.Itoa(cut) + " bytes cut …]"; !strings.Contains(got, marker) {
			t.Errorf("no %q marker", marker)
		}
	}

	c := &Client{}
	w := &stderrWriter{c: c}
	w.setScenario("one.line")
	long := bytes.Repeat([]byte("y"), 3*maxStderr)
	w.Write(append(long, '\n'))
	w.setScenario("")
	if got := c.Stderr("one.line"); !strings.HasPrefix(got, "yyyy") || !strings.Contains(got, "bytes cut") {
		t.Errorf("an over-long line: %d bytes kept, %q…", len(got), got[:min(len(got), 20)])
	}
}
