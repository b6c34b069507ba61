package trajectories

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/polyloop/polyloop-conform/internal/jsontext"
)

// schemaVerdict is what the wire accepted before DecodeChecked: the
// general validator's verdict on data, and a decode into the struct.
func schemaVerdict(t testing.TB, data []byte) (bool, *Trajectory) {
	t.Helper()
	full, err := Schema()
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if dec.Decode(&doc) != nil || dec.More() || len(full.Validate(doc)) > 0 {
		return false, nil
	}
	var tr Trajectory
	dec = json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if dec.Decode(&tr) != nil {
		return false, nil
	}
	return true, &tr
}

// agree fails t when DecodeChecked accepts what the schema refuses, or
// decodes it otherwise than the decode it replaces. It reports whether
// DecodeChecked accepted data.
func agree(t *testing.T, name string, data []byte) bool {
	t.Helper()
	got, ok := DecodeChecked(data)
	if !ok {
		return false
	}
	valid, want := schemaVerdict(t, data)
	if !valid {
		t.Fatalf("%s: DecodeChecked accepts what the schema refuses: %s", name, data)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: DecodeChecked decodes otherwise than the decode after the schema:\n  got  %+v\n  want %+v", name, got, want)
	}
	return true
}

// TestDecodeCheckedAgreesWithTheSchema: whatever DecodeChecked accepts,
// the schema accepts and the struct decodes the same; every golden, as
// the reference sends it (compact), is accepted; and the corpus of each
// golden broken in place (every key removed, renamed in another case,
// doubled, followed by an unknown key, its value replaced by a value of
// every JSON type, an out-of-range number or an off-list word), with its
// keys in their order so that the one-pass path is the one judged, holds
// both accepted and refused documents.
func TestDecodeCheckedAgreesWithTheSchema(t *testing.T) {
	goldens, err := Goldens()
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, 0, len(goldens))
	for id := range goldens {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	kinds := []string{`"s"`, `""`, `"\u00e9"`, `"EXECUTED"`, `"tool_call"`, `"a.b"`, `1`, `0`, `-1`, `1.5`, `1.0`, `true`, `false`, `null`, `{}`, `[]`, `["x"]`, `{"zzz":1}`}
	stride := 40
	if os.Getenv("POLYLOOP_LONG") == "1" {
		stride = 10
	}
	checked, accepted, refused := 0, 0, 0
	for i, id := range ids {
		var buf bytes.Buffer
		if err := json.Compact(&buf, goldens[id]); err != nil {
			t.Fatal(err)
		}
		base := buf.Bytes()
		if !agree(t, id, base) {
			t.Fatalf("%s: the golden, compact, is not accepted in one pass", id)
		}
		// Indented is the same document.
		if !agree(t, id+" (indented)", goldens[id]) {
			t.Fatalf("%s: the golden as stored is not accepted in one pass", id)
		}
		if i%stride != 0 {
			continue
		}
		for _, v := range jsontext.InPlaceMutations(base, kinds) {
			checked++
			if agree(t, id, v) {
				accepted++
			} else {
				refused++
			}
		}
	}
	if checked < 5000/stride || accepted == 0 || refused == 0 {
		t.Fatalf("corpus too small: %d variants, %d accepted in one pass, %d refused", checked, accepted, refused)
	}
	t.Logf("%d variants: %d accepted in one pass (the schema agrees), %d left to the schema", checked, accepted, refused)
}

// TestDecodeChecked: named cases, each with the verdict the schema gives.
func TestDecodeChecked(t *testing.T) {
	g, err := Goldens()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, g["executor.missing-handler"]); err != nil {
		t.Fatal(err)
	}
	base := buf.String()
	var small bytes.Buffer
	if err := json.Compact(&small, g["resume.crash-before-end"]); err != nil {
		t.Fatal(err)
	}
	steps := small.String()
	if !strings.Contains(steps, `"model_input":[`) || !strings.Contains(steps, `"status":"`) {
		t.Fatalf("resume.crash-before-end has no steps to break: %s", steps)
	}
	// edited is the golden with steps, changed on the struct and encoded
	// as the reference sends it.
	edited := func(f func(*Trajectory)) string {
		t.Helper()
		var tr Trajectory
		dec := json.NewDecoder(strings.NewReader(steps))
		dec.UseNumber()
		if err := dec.Decode(&tr); err != nil || len(tr.Steps) == 0 {
			t.Fatalf("decode: %v (%d steps)", err, len(tr.Steps))
		}
		f(&tr)
		out, err := jsontext.Marshal(&tr)
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	replace := func(s, old, new string) string {
		t.Helper()
		if !strings.Contains(s, old) {
			t.Fatalf("%q not in %s", old, s)
		}
		return strings.Replace(s, old, new, 1)
	}
	for _, c := range []struct {
		name      string
		data      string
		onePass   bool // accepted by DecodeChecked
		schemaSay bool // the verdict before: the schema's, then the decode's
	}{
		{"golden", base, true, true},
		{"wrong format", replace(base, Format, "polyloop.trajectory/v2"), false, false},
		{"scenario off the pattern", replace(base, `"scenario":"executor.missing-handler"`, `"scenario":"Executor"`), false, false},
		{"missing required key", replace(base, `"event_sink_failures":0,`, ``), false, false},
		{"unknown key", replace(base, `"event_sink_failures":0,`, `"event_sink_failures":0,"zzz":1,`), false, false},
		{"key in another case", replace(base, `"event_sink_failures":0`, `"Event_sink_failures":0`), false, false},
		{"negative count", replace(base, `"event_sink_failures":0`, `"event_sink_failures":-1`), false, false},
		// The schema takes 1.0 for an integer; the decode into the struct
		// never did (0006.D6.integer is for tool arguments, not counts).
		{"integer written 1.0", replace(base, `"event_sink_failures":0`, `"event_sink_failures":1.0`), false, false},
		{"steps, as encoded", edited(func(*Trajectory) {}), true, true},
		{"null model_input", edited(func(tr *Trajectory) { tr.Steps[0].ModelInput = nil }), false, false},
		{"arguments a list", edited(func(tr *Trajectory) { tr.Steps[0].Action.Arguments = []any{"x"} }), false, false},
		{"arguments an object", edited(func(tr *Trajectory) { tr.Steps[0].Action.Arguments = map[string]any{"n": json.Number("1.50")} }), true, true},
		{"role off the list", edited(func(tr *Trajectory) { tr.Steps[0].ModelInput[0].Role = "tool" }), false, false},
		{"step index 0", edited(func(tr *Trajectory) { tr.Steps[0].Index = 0 }), false, false},
		{"event step -1", edited(func(tr *Trajectory) { tr.Events[0].Step = -1 }), false, false},
		{"event reason off the list", edited(func(tr *Trajectory) { tr.Events[0].Reason = "done" }), false, false},
		{"interrupted during off the list", edited(func(tr *Trajectory) { tr.Interrupted = &Interrupted{Step: 1, During: "sleep"} }), false, false},
		{"interrupted", edited(func(tr *Trajectory) { tr.Interrupted = &Interrupted{Step: 1, During: "tool_call"} }), true, true},
		{"resume from off the list", edited(func(tr *Trajectory) { tr.Resume = &Resume{From: "middle"} }), false, false},
		{"run_error kind off the list", edited(func(tr *Trajectory) { tr.RunError = &RunError{Kind: "disk"} }), false, false},
		{"end detail step 0", edited(func(tr *Trajectory) {
			tr.End = &End{Reason: "resume_outcome_unknown", Detail: &EndDetail{}}
		}), false, false},
		{"assembly error kind empty", edited(func(tr *Trajectory) { tr.AssemblyError = &AssemblyError{} }), false, false},
		{"model_calls_released -1", edited(func(tr *Trajectory) { tr.ModelCallsReleased = -1 }), false, false},
		{"status off the list", replace(steps, `"status":"`, `"status":"X`), false, false},
		{"keys in another order", replace(base, `"format":"polyloop.trajectory/v1","scenario":"executor.missing-handler"`, `"scenario":"executor.missing-handler","format":"polyloop.trajectory/v1"`), false, true},
		{"escaped where the encoder does not escape", replace(base, `"format":`, `"form\u0061t":`), false, true},
		{"spaces", replace(base, `"format":`, `"format" : `), true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			valid, _ := schemaVerdict(t, []byte(c.data))
			if valid != c.schemaSay {
				t.Fatalf("the schema says %v, the case %v: %s", valid, c.schemaSay, c.data)
			}
			if got := agree(t, c.name, []byte(c.data)); got != c.onePass {
				t.Fatalf("DecodeChecked accepted=%v, want %v: %s", got, c.onePass, c.data)
			}
		})
	}
}

// TestStructMatchesTheSchema holds what DecodeChecked relies on: each
// struct's JSON fields are exactly its schema object's properties, every
// required property is a field always written (no omitempty), and a
// field always written that may be nil (sent as null) is where the schema
// allows null, or is one that meets() checks for nil.
func TestStructMatchesTheSchema(t *testing.T) {
	data, err := embedded.ReadFile(SchemaFile)
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	r := schemaReader{doc: doc}
	nilChecked := map[string]bool{"Step.model_input": true}
	for typ, ptr := range map[reflect.Type]string{
		reflect.TypeFor[Trajectory]():    "",
		reflect.TypeFor[AssemblyError](): "/properties/assembly_error/oneOf/1",
		reflect.TypeFor[HandlerCall]():   "/properties/handler_calls/items",
		reflect.TypeFor[PhaseEnd]():      "/properties/phases/items",
		reflect.TypeFor[RunError]():      "/properties/run_error",
		reflect.TypeFor[Interrupted]():   "/properties/interrupted",
		reflect.TypeFor[Resume]():        "/properties/resume",
		reflect.TypeFor[Message]():       "/$defs/message",
		reflect.TypeFor[Step]():          "/$defs/step",
		reflect.TypeFor[Action]():        "/$defs/step/properties/action",
		reflect.TypeFor[Outcome]():       "/$defs/step/properties/outcome",
		reflect.TypeFor[Counters]():      "/$defs/counters",
		reflect.TypeFor[Event]():         "/$defs/event",
		reflect.TypeFor[End]():           "/$defs/end",
		reflect.TypeFor[EndDetail]():     "/$defs/end/properties/detail",
	} {
		var obj map[string]any
		if ptr == "" {
			obj, _ = doc.(map[string]any)
		} else {
			obj, _ = r.at(ptr).(map[string]any)
		}
		props, _ := obj["properties"].(map[string]any)
		if obj["additionalProperties"] != false || len(props) == 0 {
			t.Fatalf("%s: schema at %q is not a closed object", typ.Name(), ptr)
		}
		var required []string
		for _, x := range obj["required"].([]any) {
			required = append(required, x.(string))
		}
		var fields []string
		for f := range typ.Fields() {
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			omit := opts == "omitempty"
			fields = append(fields, name)
			if slices.Contains(required, name) && omit {
				t.Errorf("%s.%s: required by the schema but omitempty", typ.Name(), name)
			}
			nilable := slices.Contains([]reflect.Kind{reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface}, f.Type.Kind())
			if nilable && !omit && !nilChecked[typ.Name()+"."+name] && !allowsNull(r, props[name]) {
				t.Errorf("%s.%s: may be sent as null, which the schema refuses, and meets() does not check it", typ.Name(), name)
			}
		}
		sort.Strings(fields)
		want := make([]string, 0, len(props))
		for k := range props {
			want = append(want, k)
		}
		sort.Strings(want)
		if !slices.Equal(fields, want) {
			t.Errorf("%s: fields %v, schema properties %v", typ.Name(), fields, want)
		}
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
}

// allowsNull reports whether a property's schema accepts null: in its
// type list, or as one of a oneOf.
func allowsNull(r schemaReader, prop any) bool {
	p, _ := prop.(map[string]any)
	switch ty := p["type"].(type) {
	case string:
		return ty == "null"
	case []any:
		return slices.Contains(ty, any("null"))
	}
	if one, ok := p["oneOf"].([]any); ok {
		for _, o := range one {
			if allowsNull(r, o) {
				return true
			}
		}
	}
	return false
}

func FuzzDecodeChecked(f *testing.F) {
	g, err := Goldens()
	if err != nil {
		f.Fatal(err)
	}
	for _, id := range []string{"executor.missing-handler", "cancel.during-tool-call", "journal.write-error-surfaces"} {
		var buf bytes.Buffer
		if err := json.Compact(&buf, g[id]); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes())
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, ok := DecodeChecked(data)
		if !ok {
			return
		}
		valid, want := schemaVerdict(t, data)
		if !valid || !reflect.DeepEqual(got, want) {
			t.Fatalf("DecodeChecked accepts %q: the schema says %v", data, valid)
		}
	})
}
