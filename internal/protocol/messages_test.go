package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/polyloop/polyloop-conform/scenarios"
)

func TestDecode(t *testing.T) {
	m, err := Decode([]byte(`{"type":"model_call","call":3,"phase":0,"input":[{"role":"user","content":"x"}]}`))
	if err != nil || m.Type != TypeModelCall || m.Call != 3 || m.Input == nil || len(*m.Input) != 1 || m.Phase == nil || *m.Phase != 0 {
		t.Fatalf("%+v %v", m, err)
	}
	for line, want := range map[string]string{
		"":                                      "empty line",
		"hello":                                 "not a JSON object",
		`{"call":1}`:                            `no "type"`,
		`{"type":"x"} {"type":"y"}`:             "text after the JSON object",
		`{"type":"released","call":1}}`:         "text after the JSON object",
		`{"type":"released","call":1,"call":2}`: "duplicate key at /call",
		`{"type":"model_call","call":"one","phase":0,"input":[]}`:         "at /call: got string, want integer",
		`{"type":"model_call","call":1,"input":[]}`:                       "at /: missing property 'phase'",
		`{"type":"model_call","call":1,"phase":0,"input":[],"extra":1}`:   "additional properties 'extra' not allowed",
		`{"type":"handler_result","call":1,"output":"a","env_error":"b"}`: "maxProperties",
		`{"type":"banana"}`: `unexpected message type "banana"`,
		`{"type":"result","id":"a.b","trajectory":{"format":"polyloop.trajectory/v1"}}`: "the result's trajectory does not match trajectories/trajectory.schema.json: at /trajectory: missing properties",
		`{"type":`: "unexpected EOF",
	} {
		_, err := Decode([]byte(line))
		if !errors.Is(err, ErrBadMessage) || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err = %v, want %q", line, err, want)
		}
	}
}

func TestSpecRoundTrip(t *testing.T) {
	scs, err := scenarios.LoadEmbedded()
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range scs {
		spec := SpecFor(sc)
		line, err := Encode(&Message{Type: TypeRun, ID: sc.ID, Spec: spec})
		if err != nil {
			t.Fatal(err)
		}
		m, err := Decode(line)
		if err != nil {
			t.Fatalf("%s: %v", sc.ID, err)
		}
		back := ScenarioFor(m.Spec)
		if len(back.Runs()) != len(sc.Runs()) || len(back.Tools) != len(sc.Tools) {
			t.Errorf("%s: runs or tools lost", sc.ID)
		}
		for i, r := range sc.Runs() {
			if (r.VisibleTools == nil) != (back.Runs()[i].VisibleTools == nil) {
				t.Errorf("%s: visible_tools null/[] distinction lost", sc.ID)
			}
		}
		if strings.Contains(string(line), `"expect"`) || strings.Contains(string(line), `"model":`) {
			t.Errorf("%s: the spec leaks the script or the oracle", sc.ID)
		}
	}
}

// TestSpecKeepsInjectionOrder: the run message lists injections in the
// order the scenario writes them, so an implementation that does not sort
// channels (0010.D3) shows it instead of inheriting the runner's order.
func TestSpecKeepsInjectionOrder(t *testing.T) {
	scs, err := scenarios.LoadEmbedded()
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range scs {
		if sc.ID != "context.injections-sorted" {
			continue
		}
		line, err := Encode(&Message{Type: TypeRun, ID: sc.ID, Spec: SpecFor(sc)})
		if err != nil {
			t.Fatal(err)
		}
		const want = `"injections":[{"channel":"zeta","text":"z1"},{"channel":"alpha","text":"a1"},{"channel":"alpha","text":"a2 with\nnewline"},{"channel":"Beta","text":"B1"},{"channel":"mid","text":"m1"}]`
		if !strings.Contains(string(line), want) {
			t.Fatalf("run message:\n%s\nwant it to contain\n%s", line, want)
		}
		return
	}
	t.Fatal("no scenario context.injections-sorted")
}

// TestExamplesMatchTheSchema: every message of the transcripts in
// docs/examples, in both directions, validates against
// docs/protocol.schema.json (results' trajectories against the trajectory
// schema too), so the examples a newcomer copies are well-formed.
func TestExamplesMatchTheSchema(t *testing.T) {
	files, err := filepath.Glob("../../docs/examples/*.jsonl")
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	types := map[string]bool{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
			var entry struct {
				From    string          `json:"from"`
				Message json.RawMessage `json:"message"`
			}
			if err := json.Unmarshal(line, &entry); err != nil {
				t.Fatalf("%s:%d: %v", f, i+1, err)
			}
			m, err := Decode(entry.Message)
			if err != nil {
				t.Errorf("%s:%d (%s): %v", f, i+1, entry.From, err)
				continue
			}
			types[m.Type] = true
		}
	}
	for _, want := range []string{TypeHello, TypeRun, TypeModelCall, TypeModelResult, TypeHandlerCall, TypeHandlerResult, TypeCancel, TypeResult} {
		if !types[want] {
			t.Errorf("no example shows a %s message", want)
		}
	}
}
