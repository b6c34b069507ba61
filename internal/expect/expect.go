// Package expect checks a trajectory against a scenario's hand-written
// expect block, the oracle that is independent of any golden file.
package expect

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/google/go-cmp/cmp"

	"github.com/polyloop/polyloop-conform/internal/compare"
	"github.com/polyloop/polyloop-conform/internal/jsontext"
	"github.com/polyloop/polyloop-conform/scenarios"
)

// Failure is one expectation the trajectory does not meet.
type Failure struct {
	Path string
	Want any
	Got  any
	// Missing is true when the path does not exist in the trajectory.
	Missing bool
	// Note replaces the want/got rendering for expectations that are not
	// a single value (for example "no such event").
	Note string
}

func (f Failure) String() string {
	if f.Note != "" {
		return fmt.Sprintf("%s: %s", f.Path, f.Note)
	}
	got := compare.Render(f.Got)
	if f.Missing {
		got = "(absent)"
	}
	return fmt.Sprintf("%s: want %s, got %s", f.Path, compare.Render(f.Want), got)
}

// sameNumbers compares JSON numbers by value, not spelling: a port may
// keep 2.0 or write 2 (0006.D6.integer), and an expectation states the
// value the design decides.
var sameNumbers = cmp.Comparer(func(a, b json.Number) bool { return jsontext.SameNumber(a, b) })

type checker struct {
	doc      any
	failures []Failure
	// read records every path an expectation looks at (Paths).
	read []string
}

func (c *checker) value(path string, want any) {
	c.read = append(c.read, path)
	got, ok, err := compare.Lookup(c.doc, path)
	if err != nil {
		c.failures = append(c.failures, Failure{Path: path, Note: err.Error()})
		return
	}
	w := compare.Normalize(want)
	if !ok {
		c.failures = append(c.failures, Failure{Path: path, Want: w, Missing: true})
		return
	}
	if !cmp.Equal(w, compare.Normalize(got), sameNumbers) {
		c.failures = append(c.failures, Failure{Path: path, Want: w, Got: got})
	}
}

// list returns the array at path; reading it records only its length
// ("path[#]"), since finding an element by its fields records those.
func (c *checker) list(path string) []any {
	c.read = append(c.read, path+"[#]")
	v, _, _ := compare.Lookup(c.doc, path)
	l, _ := v.([]any)
	return l
}

// Check returns every expectation of sc that doc (a trajectory as plain
// JSON values) does not meet, in the order the expect block lists them.
func Check(sc *scenarios.Scenario, doc any) []Failure {
	return check(sc, doc).failures
}

// Paths returns the paths of doc that sc's expectations look at, so a
// tool can refuse to ignore what the scenario's own oracle checks. A path
// checks everything below it; "steps[#]" stands for the length of steps.
func Paths(sc *scenarios.Scenario, doc any) []string {
	return check(sc, doc).read
}

func check(sc *scenarios.Scenario, doc any) *checker {
	c := &checker{doc: doc}
	e := sc.Expect
	checkStop(c, sc, e)
	if e.Steps != nil {
		if got := len(c.list("steps")); got != *e.Steps {
			c.failures = append(c.failures, Failure{Path: "steps", Note: fmt.Sprintf("want %d steps, got %d", *e.Steps, got)})
		}
	}
	for _, s := range e.Step {
		checkStep(c, s)
	}
	if e.HandlerCalls != nil {
		checkHandlerCalls(c, e.HandlerCalls)
	}
	optional(c, "model_calls", e.ModelCalls)
	optional(c, "event_sink_failures", e.EventSinkFailures)
	for i, p := range e.Phases {
		base := fmt.Sprintf("phases[%d]", i)
		c.value(base+".name", p.Name)
		c.value(base+".end.reason", p.Reason)
		optional(c, base+".end.effective_steps", p.EffectiveSteps)
		optional(c, base+".end.total_steps", p.TotalSteps)
	}
	for _, mi := range e.ModelInput {
		pos, ok := findStep(c, mi.Step, mi.Phase)
		if !ok {
			continue
		}
		c.value(fmt.Sprintf("steps[%d].model_input", pos), mi.Messages)
	}
	for _, ev := range e.Events {
		checkEvent(c, ev)
	}
	if e.EventTypes != nil {
		checkEventTypes(c, e.EventTypes)
	}
	keys := make([]string, 0, len(e.Fields))
	for k := range e.Fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		c.value(k, e.Fields[k])
	}
	return c
}

// checkStop checks how the run stopped: refused, failed, interrupted or
// ended.
func checkStop(c *checker, sc *scenarios.Scenario, e scenarios.Expect) {
	if e.AssemblyError != nil {
		c.value("assembly_error.kind", e.AssemblyError.Kind)
		if e.AssemblyError.Tools != nil {
			c.value("assembly_error.tools", e.AssemblyError.Tools)
		}
		if sc.Request != nil {
			// A refused request calls nothing; in a phased scenario the
			// phases before the refused one ran (expect.model_calls).
			c.value("model_calls", 0)
		}
	} else {
		c.value("assembly_error", nil)
	}
	if e.RunError != "" {
		c.value("run_error.kind", e.RunError)
		c.value("end", nil)
	}
	if i := e.Interrupted; i != nil {
		if i.Phase != "" {
			c.value("interrupted.phase", i.Phase)
		}
		c.value("interrupted.step", i.Step)
		c.value("interrupted.during", i.During)
		if i.Tool != "" {
			c.value("interrupted.tool", i.Tool)
		}
		c.value("end", nil)
	}
	if e.End != nil {
		c.value("end.reason", e.End.Reason)
		optional(c, "end.effective_steps", e.End.EffectiveSteps)
		optional(c, "end.total_steps", e.End.TotalSteps)
		optional(c, "end.detail.step", e.End.DetailStep)
		if e.End.DetailTool != "" {
			c.value("end.detail.tool", e.End.DetailTool)
		}
		if e.End.DetailDuring != "" {
			c.value("end.detail.during", e.End.DetailDuring)
		}
	}
}

// checkHandlerCalls checks how often each named tool's handler was called.
func checkHandlerCalls(c *checker, want map[string]int) {
	counts := map[string]int{}
	for i, hc := range c.list("handler_calls") {
		c.read = append(c.read, fmt.Sprintf("handler_calls[%d].tool", i))
		if m, ok := hc.(map[string]any); ok {
			if t, ok := m["tool"].(string); ok {
				counts[t]++
			}
		}
	}
	names := make([]string, 0, len(want))
	for n := range want {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if counts[n] != want[n] {
			c.failures = append(c.failures, Failure{Path: fmt.Sprintf("handler_calls[tool=%s]", n), Note: fmt.Sprintf("want %d calls, got %d", want[n], counts[n])})
		}
	}
}

// checkEventTypes checks the types of the events, in order.
func checkEventTypes(c *checker, want []string) {
	var got []string
	for i, ev := range c.list("events") {
		c.read = append(c.read, fmt.Sprintf("events[%d].type", i))
		m, _ := ev.(map[string]any)
		t, _ := m["type"].(string)
		got = append(got, t)
	}
	if !slices.Equal(got, want) {
		c.failures = append(c.failures, Failure{Path: "events", Note: fmt.Sprintf("event types in order: want %v, got %v", want, got)})
	}
}

func optional(c *checker, path string, v *int) {
	if v != nil {
		c.value(path, *v)
	}
}

func findStep(c *checker, index int, phase string) (int, bool) {
	for i, s := range c.list("steps") {
		c.read = append(c.read, fmt.Sprintf("steps[%d].index", i), fmt.Sprintf("steps[%d].phase", i))
		m, _ := s.(map[string]any)
		if fmt.Sprint(m["index"]) == fmt.Sprint(index) && (phase == "" || m["phase"] == phase) {
			return i, true
		}
	}
	where := fmt.Sprintf("step %d", index)
	if phase != "" {
		where += " of phase " + phase
	}
	c.failures = append(c.failures, Failure{Path: "steps", Note: "the trajectory has no " + where})
	return 0, false
}

func checkStep(c *checker, s scenarios.ExpectStep) {
	pos, ok := findStep(c, s.Index, s.Phase)
	if !ok {
		return
	}
	p := func(field string) string { return fmt.Sprintf("steps[%d].%s", pos, field) }
	if s.Status != "" {
		c.value(p("outcome.status"), s.Status)
	}
	if s.Observation != nil {
		c.value(p("outcome.observation"), *s.Observation)
	}
	if s.ObservationContains != "" {
		c.read = append(c.read, p("outcome.observation"))
		got, _, _ := compare.Lookup(c.doc, p("outcome.observation"))
		if str, _ := got.(string); !strings.Contains(str, s.ObservationContains) {
			c.failures = append(c.failures, Failure{Path: p("outcome.observation"), Note: fmt.Sprintf("want text containing %q, got %s", s.ObservationContains, compare.Render(got))})
		}
	}
	if s.ObservationIsSynthetic != nil {
		c.value(p("outcome.observation_is_synthetic"), *s.ObservationIsSynthetic)
	}
	if s.EnvReportedCompletion != nil {
		c.value(p("outcome.env_reported_completion"), *s.EnvReportedCompletion)
	}
	optional(c, p("outcome.observation_truncated_chars"), s.ObservationTruncatedChars)
	if s.HistoryObservation != nil {
		c.value(p("history_observation"), *s.HistoryObservation)
	}
	if s.ActionKind != "" {
		c.value(p("action.kind"), s.ActionKind)
	}
	if s.Tool != "" {
		c.value(p("action.tool"), s.Tool)
	}
	if s.Arguments != nil {
		c.value(p("action.arguments"), s.Arguments)
	}
	if s.Repairs != nil {
		c.value(p("action.repairs"), s.Repairs)
	}
	if s.Replayed != nil {
		c.value(p("replayed"), *s.Replayed)
	}
	optional(c, p("counters.effective_steps"), s.EffectiveSteps)
	optional(c, p("counters.total_steps"), s.TotalSteps)
}

func checkEvent(c *checker, want scenarios.ExpectEvent) {
	fields := map[string]any{"type": want.Type}
	if want.Step != 0 {
		fields["step"] = want.Step
	}
	if want.RawOutput != "" {
		fields["raw_output"] = want.RawOutput
	}
	if want.Decision != nil {
		fields["decision"] = want.Decision
	}
	if want.Repairs != nil {
		fields["repairs"] = want.Repairs
	}
	if want.Status != "" {
		fields["status"] = want.Status
	}
	if want.ErrorType != "" {
		fields["error_type"] = want.ErrorType
	}
	if want.Observation != "" {
		fields["executor_observation"] = want.Observation
	}
	if want.Phase != "" {
		fields["phase"] = want.Phase
	}
	if want.Reason != "" {
		fields["reason"] = want.Reason
	}
	if want.Tool != "" {
		fields["tool"] = want.Tool
	}
	if want.Replayed != nil {
		fields["replayed"] = *want.Replayed
	}
	wantN := compare.Normalize(fields).(map[string]any)
	for i, ev := range c.list("events") {
		for k := range wantN {
			c.read = append(c.read, fmt.Sprintf("events[%d].%s", i, k))
		}
		m, _ := ev.(map[string]any)
		match := true
		for k, v := range wantN {
			got := compare.Normalize(m[k])
			if k == "replayed" && got == nil {
				got = false // an event leaves replayed: false out
			}
			if !cmp.Equal(v, got) {
				match = false
				break
			}
		}
		if match {
			return
		}
	}
	c.failures = append(c.failures, Failure{Path: "events", Note: "no event matches " + compare.Render(wantN)})
}
