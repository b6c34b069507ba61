package polyloopkit

import (
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// shapes maps each shape of docs/protocol.schema.json (a JSON pointer) to
// the kit's type for it.
var shapes = map[string]any{
	"/$defs/message":                    ChatMessage{},
	"/$defs/hello":                      Hello{},
	"/$defs/spec":                       Spec{},
	"/$defs/spec/properties/definition": Definition{},
	"/$defs/spec/properties/faults":     Faults{},
	"/$defs/spec/properties/faults/properties/journal_error": JournalError{},
	"/$defs/tool":                                Tool{},
	"/$defs/request":                             Request{},
	"/$defs/request/properties/budget":           Budget{},
	"/$defs/request/properties/synthetic":        Synthetic{},
	"/$defs/request/properties/injections/items": Injection{},
	"/$defs/run":                                 RunMessage{},
	"/$defs/resume":                              ResumeMessage{},
	"/$defs/model_call":                          ModelCall{},
	"/$defs/model_result":                        ModelResult{},
	"/$defs/model_result/properties/error":       NamedError{},
	"/$defs/handler_call":                        HandlerCall{},
	"/$defs/handler_result":                      HandlerResult{},
	"/$defs/execute_call":                        ExecuteCall{},
	"/$defs/execute_call/properties/action":      Action{},
	"/$defs/execute_result":                      ExecuteResult{},
	"/$defs/execute_result/properties/outcome":   Outcome{},
	"/$defs/journal_point":                       JournalPoint{},
	"/$defs/journal_point/properties/point":      Point{},
	"/$defs/answer_only":                         AnswerOnly{},
	"/$defs/cancel":                              Cancel{},
	"/$defs/event":                               EventMessage{},
	"/$defs/event_result":                        EventResult{},
	"/$defs/measure_call":                        MeasureCall{},
	"/$defs/measure_result":                      MeasureResult{},
	"/$defs/result":                              ResultMessage{},
	"/$defs/error":                               ErrorMessage{},
	"/$defs/fork":                                Fork{},
	"/$defs/forked":                              Forked{},
}

// Each type has its shape's properties as JSON keys, and a key is
// required by the schema exactly when the type never leaves it out (no
// omitempty, no omitzero); every shape of a message type has a type.
func TestMessages_matchTheSchema(t *testing.T) {
	data, err := os.ReadFile("../docs/protocol.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var schema map[string]any
	if err := json.Unmarshal(data, &schema); err != nil {
		t.Fatal(err)
	}
	for pointer, v := range shapes {
		shape := resolve(t, schema, pointer)
		props, _ := shape["properties"].(map[string]any)
		var want, wantRequired []string
		for k := range props {
			want = append(want, k)
		}
		for _, r := range asList(shape["required"]) {
			wantRequired = append(wantRequired, r.(string))
		}
		got, gotRequired := keys(reflect.TypeOf(v))
		slices.Sort(want)
		slices.Sort(wantRequired)
		if !slices.Equal(got, want) {
			t.Errorf("%T has keys %v; %s has %v", v, got, pointer, want)
		}
		if !slices.Equal(gotRequired, wantRequired) {
			t.Errorf("%T always writes %v; %s requires %v", v, gotRequired, pointer, wantRequired)
		}
	}
	for _, then := range asList(schema["allOf"]) {
		ref := then.(map[string]any)["then"].(map[string]any)["$ref"].(string)
		if _, ok := shapes[strings.TrimPrefix(ref, "#")]; !ok {
			t.Errorf("the schema's message shape %s has no type in the kit", ref)
		}
	}
}

func resolve(t *testing.T, doc map[string]any, pointer string) map[string]any {
	node := doc
	for _, part := range strings.Split(strings.Trim(pointer, "/"), "/") {
		next, ok := node[part].(map[string]any)
		if !ok {
			t.Fatalf("%s: no %q in the schema", pointer, part)
		}
		node = next
	}
	return node
}

func asList(v any) []any { l, _ := v.([]any); return l }

// keys are a struct's JSON keys, sorted, and those it always writes.
func keys(rt reflect.Type) (all, always []string) {
	for f := range rt.Fields() {
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		all = append(all, name)
		if !strings.Contains(opts, "omitempty") && !strings.Contains(opts, "omitzero") {
			always = append(always, name)
		}
	}
	slices.Sort(all)
	slices.Sort(always)
	return all, always
}
