package protocol

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/polyloop/polyloop-conform/internal/jsontext"
)

// TestTypedDecodeAgreesWithTheSchema: the typed checks of the
// implementation's messages and docs/protocol.schema.json (with the
// trajectory schema for a result) give the same verdict on every message
// of a corpus: the messages of every recorded transcript, and each of
// them broken every way the corpus knows (a key removed, an unknown key
// added, each value, top-level and nested, replaced by a value of every
// JSON type and by out-of-range numbers).
func TestTypedDecodeAgreesWithTheSchema(t *testing.T) {
	var corpus [][]byte
	files, _ := filepath.Glob("../../docs/examples/*.jsonl")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range splitLines(data) {
			var e struct {
				From    string          `json:"from"`
				Message json.RawMessage `json:"message"`
			}
			if json.Unmarshal(line, &e) == nil && e.From == "implementation" {
				corpus = append(corpus, e.Message)
			}
		}
	}
	corpus = append(corpus,
		[]byte(`{"type":"hello","protocol":1,"name":"x","version":"1","spec_version":"s","capabilities":["json-actions","fork-server"]}`),
		[]byte(`{"type":"handler_call","call":2,"phase":0,"tool":"t","arguments":{"n":10.000}}`),
		[]byte(`{"type":"execute_call","call":3,"phase":1,"action":{"kind":"tool_call","tool":"t","arguments":{}}}`),
		[]byte(`{"type":"execute_call","call":3,"phase":0,"action":{"kind":"code","code":"ls"}}`),
		[]byte(`{"type":"journal_point","call":4,"phase":1,"point":{"when":"after","seq":2,"record":"action_intent","step":1}}`),
		[]byte(`{"type":"released","call":5}`),
		[]byte(`{"type":"error","id":"run.0123456789abcdef","message":"broke"}`),
		[]byte(`{"type":"error","message":"broke"}`),
		[]byte(`{"type":"event","call":6,"phase":0,"event":{"type":"run_started"}}`),
		[]byte(`{"type":"measure_call","call":7,"phase":0,"block":"observation","text":""}`),
		[]byte(`{"type":"forked","pid":4242}`),
	)
	kinds := []string{`"s"`, `""`, `1`, `1.5`, `1.0`, `-1`, `0`, `true`, `null`, `{}`, `[]`, `["x"]`, `{"zzz":1}`}
	checked, invalid := 0, 0
	for _, base := range corpus {
		var doc map[string]any
		dec := json.NewDecoder(bytes.NewReader(base))
		dec.UseNumber()
		if err := dec.Decode(&doc); err != nil {
			t.Fatal(err)
		}
		if _, typed := shapes[doc["type"].(string)]; !typed {
			continue
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, base); err != nil {
			t.Fatal(err)
		}
		variants := [][]byte{base, append(bytes.TrimSuffix(bytes.TrimSpace(base), []byte("}")), []byte(`,"zzz":1}`)...)}
		// The trajectory, the arguments and the event are judged by their
		// own schemas below their top.
		for _, v := range jsontext.Mutations(doc, kinds, func(k string) bool { return k == "trajectory" || k == "arguments" || k == "event" }) {
			if m, ok := v.(map[string]any); ok && m["type"] != doc["type"] {
				continue // a message of another type, or none: not this shape's verdict
			}
			line, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			variants = append(variants, line)
		}
		// The same, broken in place with the keys in their order, so that
		// the one-pass decodes (trajectories.DecodeChecked, messagesChecked)
		// are the paths judged.
		for _, v := range jsontext.InPlaceMutations(compact.Bytes(), kinds) {
			var head struct {
				Type any `json:"type"`
			}
			if json.Unmarshal(v, &head) == nil && head.Type == doc["type"] && jsontext.CheckDuplicateKeys(v) == nil {
				variants = append(variants, v)
			}
		}
		for _, line := range variants {
			_, typedErr := Decode(line)
			_, schemaErr := decodeBySchema(line)
			checked++
			if schemaErr != nil {
				invalid++
			}
			if (typedErr == nil) != (schemaErr == nil) {
				t.Errorf("verdicts differ on %s:\n  typed:  %v\n  schema: %v", line, typedErr, schemaErr)
			}
		}
	}
	if checked < 5000 || invalid == 0 || invalid == checked {
		t.Fatalf("corpus too small to mean anything: %d messages, %d invalid", checked, invalid)
	}
	t.Logf("%d messages, %d invalid, the same verdicts", checked, invalid)
}

func splitLines(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		i := 0
		for i < len(b) && b[i] != '\n' {
			i++
		}
		if i > 0 {
			out = append(out, b[:i])
		}
		if i == len(b) {
			break
		}
		b = b[i+1:]
	}
	return out
}
