package serveref

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/polyloop/polyloop-conform/internal/protocol"
)

// TestServeReplaysATranscript: the runner's lines of a transcript, fed to
// serve-reference in one go, give the implementation's lines of the same
// transcript, and Serve returns at the end of input instead of waiting.
func TestServeReplaysATranscript(t *testing.T) {
	files, _ := filepath.Glob("../../docs/examples/*.jsonl")
	if len(files) == 0 {
		t.Fatal("no examples")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var in bytes.Buffer
			var want []string
			var caps []string // the implementation's hello: with or without the protocol options
			for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
				var e struct {
					From    string          `json:"from"`
					Message json.RawMessage `json:"message"`
				}
				if err := json.Unmarshal([]byte(line), &e); err != nil {
					t.Fatal(err)
				}
				if e.From == "runner" {
					in.Write(e.Message)
					in.WriteByte('\n')
				} else {
					want = append(want, compact(t, e.Message))
					var hello struct {
						Type         string   `json:"type"`
						Capabilities []string `json:"capabilities"`
					}
					if json.Unmarshal(e.Message, &hello) == nil && hello.Type == "hello" {
						caps = hello.Capabilities
					}
				}
			}
			var out bytes.Buffer
			done := make(chan error, 1)
			id := Identity{Name: "polyloop-conform-reference", Version: protocol.SuiteVersion,
				SpecVersion:  "polyloop-design-2026-08 (0002 0003 0004 0006 0007 0008 0010 0011)",
				Capabilities: caps}
			go func() { done <- Serve(context.Background(), id, ServeOptions{}, &in, &out) }()
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Serve did not return at the end of its input")
			}
			var got []string
			for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
				got = append(got, compact(t, []byte(line)))
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("replay differs from the transcript:\ngot:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

// TestServeReturnsWhenInputEndsMidCall: a runner that goes away while the
// implementation waits for an answer leaves no serve-reference behind.
func TestServeReturnsWhenInputEndsMidCall(t *testing.T) {
	in := strings.NewReader(`{"type":"hello","suite":"polyloop-conform","suite_version":"0.1.0","protocol":1}
{"type":"run","id":"a.b","spec":{"scenario":"a.b","tools":[],"definition":{},"requests":[{"budget":{"max_effective_steps":1,"max_total_steps":1},"visible_tools":null}]}}
`)
	var out bytes.Buffer
	done := make(chan error, 1)
	go func() { done <- Serve(context.Background(), Identity{Name: "x"}, ServeOptions{}, in, &out) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Serve waited for an answer that can never come")
	}
	if !strings.Contains(out.String(), `"input":[]`) || !strings.Contains(out.String(), "input ended before its answer") {
		t.Errorf("output:\n%s", out.String())
	}
}

func compact(t *testing.T, raw []byte) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
