package docgen

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/polyloop/polyloop-conform/scenarios"
	"github.com/polyloop/polyloop-conform/trajectories"
)

// Presence is one row of docs/trajectory-format.md's presence table: when
// a field is present, what to send when there is nothing, and the same
// condition as a predicate that CheckPresence evaluates on every golden,
// so the sentence and the goldens cannot disagree.
type Presence struct {
	Field   string
	Present string // the "present" cell, as the reader reads it
	Empty   string // the "empty form" cell
	// When is the condition, on the object that holds the field; nil
	// exactly for a field the schema requires ("always").
	When func(At) bool
}

// At is where a field's condition is evaluated: one instance of the
// object that holds the field, in one golden.
type At struct {
	Scenario *scenarios.Scenario
	Root     map[string]any
	Parent   map[string]any
	// Ancestors are the objects above Parent, nearest first (for
	// phases[*].end.detail: the end, then the phase).
	Ancestors []map[string]any
}

func obj(v any) map[string]any { m, _ := v.(map[string]any); return m }
func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}
func has(m map[string]any, k string) bool { v, ok := m[k]; return ok && v != nil }

// phased: the scenario has phases.
func phased(a At) bool { return len(a.Scenario.Phases) > 0 }

// stepOf finds the settled step an event belongs to (by phase and index).
func stepOf(a At, ev map[string]any) map[string]any {
	steps, _ := a.Root["steps"].([]any)
	for _, s := range steps {
		st := obj(s)
		if st["index"] == ev["step"] && str(st, "phase") == str(ev, "phase") {
			return st
		}
	}
	return nil
}

func isOneOf(s string, set ...string) bool {
	for _, x := range set {
		if s == x {
			return true
		}
	}
	return false
}

// settles: the event types that settle a step.
func settles(ev map[string]any) bool {
	return isOneOf(str(ev, "type"), "tool_call", "code_action", "decision_failed")
}

// unknownIsTool: an end.detail names a tool exactly when the action whose
// outcome is unknown was a tool call; the scenario's model output for that
// step says which (a code action is a fenced block, 0002.D4.code).
func unknownIsTool(a At) bool {
	detail := a.Parent
	n := int64(num(detail["step"]))
	runs := a.Scenario.Runs()
	run := runs[0]
	if len(a.Ancestors) == 2 { // phases[*].end.detail: end, then the phase
		for _, r := range runs {
			if r.Name == str(a.Ancestors[1], "name") {
				run = r
			}
		}
	}
	if n < 1 || int(n) > len(run.Model) {
		return false
	}
	return !strings.Contains(run.Model[n-1].Output, "```")
}

// PresenceTable is the presence table, row by row.
func PresenceTable() []Presence {
	return []Presence{
		{"assembly_error", "always", "`null` when the run was not refused", nil},
		{"assembly_error.kind", "always, in an `assembly_error`", "—", nil},
		{"assembly_error.message", "always, in an `assembly_error`", "—: a sentence (the text rule: non-empty where the reference's is)", nil},
		{"assembly_error.tools", "always, in an `assembly_error`", "`[]` when the refusal names no tool (`invalid_budget`); `null` reads the same", nil},
		{"end", "always", "`null` when no run started (a single request, or a scenario's first phase, refused) or the last run that started stopped with `run_error` or was interrupted; a later phase refused at assembly keeps the end of the phase before it (0004.D2, 0003.D1.end)", nil},
		{"end.detail", "only when `end.reason` is `resume_outcome_unknown` (0002.D4.unknown)", "absent", func(a At) bool { return str(a.Parent, "reason") == "resume_outcome_unknown" }},
		{"end.detail.during", "never, in a run that follows the design: `resume_outcome_unknown` names the step and the tool; what was in flight when a run stopped without an end is `interrupted.during`", "absent", func(At) bool { return false }},
		{"end.detail.step", "always, in an `end.detail`", "—", nil},
		{"end.detail.tool", "when the unknown action was a tool call; absent for a code action (0002.D4.code)", "absent", unknownIsTool},
		{"end.effective_steps", "always, in an `end`", "`0`", nil},
		{"end.reason", "always, in an `end`", "—", nil},
		{"end.total_steps", "always, in an `end`", "`0`", nil},
		{"event_sink_failures", "always", "`0`", nil},
		{"events", "always", "`[]` (no events: a refused run, a resumed run that found the run's end, a refused damaged journal, or `events` not claimed); `null` reads the same", nil},
		{"events[*].decision", "on `model_step` when an action was decided (0011.D1)", "absent", func(a At) bool { return str(a.Parent, "type") == "model_step" && !has(a.Parent, "error") }},
		{"events[*].error", "on `model_step` when no action could be decided (0003.D7)", "absent", func(a At) bool { return str(a.Parent, "type") == "model_step" && !has(a.Parent, "decision") }},
		{"events[*].error_type", "on `tool_call` when the handler raised", "absent", func(a At) bool { return str(a.Parent, "type") == "tool_call" && handlerRaised(a) }},
		{"events[*].executor_observation", "on `tool_call`, `code_action` and `decision_failed` when the observation is not empty", "absent: `\"\"` reads the same", func(a At) bool { return settles(a.Parent) && observation(a) != "" }},
		{"events[*].phase", "on every event of a multi-phase scenario", "absent", phased},
		{"events[*].raw_output", "on `model_step` when the output is not empty", "absent: `\"\"` reads the same", func(a At) bool { return str(a.Parent, "type") == "model_step" && modelOutput(a) != "" }},
		{"events[*].reason", "on `run_ended`", "absent", func(a At) bool { return str(a.Parent, "type") == "run_ended" }},
		{"events[*].repairs", "on `model_step` when a repair was applied", "absent: `[]` reads the same", func(a At) bool { return str(a.Parent, "type") == "model_step" && repaired(a) }},
		{"events[*].replayed", "on the settlement event of a replayed step (0011.D3)", "absent: `false` reads the same", func(a At) bool {
			st := stepOf(a, a.Parent)
			return settles(a.Parent) && st != nil && st["replayed"] == true
		}},
		{"events[*].status", "on `tool_call`, `code_action` and `decision_failed`", "absent", settlesAt},
		{"events[*].step", "on every event but `run_started` and `run_ended`", "absent", func(a At) bool { return !isOneOf(str(a.Parent, "type"), "run_started", "run_ended") }},
		{"events[*].tool", "on `tool_call`, and on `run_interrupted` for a tool call in flight", "absent", func(a At) bool {
			t := str(a.Parent, "type")
			return t == "tool_call" || (t == "run_interrupted" && str(obj(a.Root["interrupted"]), "during") == "tool_call")
		}},
		{"events[*].type", "always, in an event", "—", nil},
		{"format", "always", "—", nil},
		{"handler_calls", "always", "`[]`: the runner fills it, so send `[]`; `null` reads the same", nil},
		{"handler_calls[*].arguments", "always, in a handler call", "`{}`; `null` reads the same", nil},
		{"handler_calls[*].phase", "in a multi-phase scenario", "absent", phased},
		{"handler_calls[*].released", "on the call in flight when the run was cancelled or its deadline passed, once released (0004.D4.release; the resumed run's trajectory keeps it)", "absent: `false` reads the same", released},
		{"handler_calls[*].tool", "always, in a handler call", "—", nil},
		{"interrupted", "only when the run was cancelled or its deadline passed, before it ended (0004.D4); not when its model call failed, which is a `run_error` (0003.D3)", "absent", stoppedWithoutEnd},
		{"interrupted.during", "always, in an `interrupted`", "—", nil},
		{"interrupted.phase", "in a multi-phase scenario", "absent", phased},
		{"interrupted.step", "always, in an `interrupted`", "—", nil},
		{"interrupted.tool", "when `during` is `tool_call`", "absent", func(a At) bool { return str(a.Parent, "during") == "tool_call" }},
		{"model_calls", "always", "`0`: the runner fills it, so send `0`", nil},
		{"model_calls_released", "when the run was cancelled, or its deadline passed, during a model call, which was released (0004.D4.release; the resumed run's trajectory keeps it); the runner fills it", "absent: `0` reads the same", func(a At) bool {
			spec, _ := a.Scenario.Faults.Interruption()
			return (spec != nil && spec.During == "model_call") || modelBlocks(a.Scenario)
		}},
		{"phases", "in a multi-phase scenario: one entry per phase that ended, in order (0003.D1)", "absent: `[]` reads the same", phased},
		{"phases[*].end", "always, in a phase", "—", nil},
		{"phases[*].end.detail", "only when that phase ended `resume_outcome_unknown`", "absent", func(a At) bool { return str(a.Parent, "reason") == "resume_outcome_unknown" }},
		{"phases[*].end.detail.during", "never, in a run that follows the design (as `end.detail.during`)", "absent", func(At) bool { return false }},
		{"phases[*].end.detail.step", "always, in a `detail`", "—", nil},
		{"phases[*].end.detail.tool", "when the unknown action was a tool call", "absent", unknownIsTool},
		{"phases[*].end.effective_steps", "always, in a phase's end", "`0`", nil},
		{"phases[*].end.reason", "always, in a phase's end", "—", nil},
		{"phases[*].end.total_steps", "always, in a phase's end", "`0`", nil},
		{"phases[*].name", "always, in a phase", "—", nil},
		{"resume", "only on a resumed run; not when resume refused a damaged journal (0002.D5)", "absent", func(a At) bool {
			f := a.Scenario.Faults
			return (crashReached(f) || f.Resume || f.TornTail) && f.JournalDamage == ""
		}},
		{"resume.crash_point", "after a scripted crash; the runner writes it, do not send it", "absent", func(a At) bool { return crashReached(a.Scenario.Faults) }},
		{"resume.from", "always, in a `resume`", "—", nil},
		{"resume.replayed_step", "when this resume ran a SAFE step again (0002.D4); not for a step an earlier resume replayed", "absent", func(a At) bool { return replayedHere(a.Root) }},
		{"resume.torn_tail", "when resume cut a torn last record (0002.D5)", "absent: `false` reads the same", func(a At) bool { return a.Scenario.Faults.TornTail }},
		{"run_error", "only when a journal write failed (0002.D6), the model call failed (0003.D3; not on the resumed run that follows it) or resume refused a damaged journal (0002.D5)", "absent", func(a At) bool {
			f := a.Scenario.Faults
			// A write fault at a record the design never writes (the intent
			// of an invalid call, 0002.D1.no-intent-invalid) fails nothing:
			// the scenario's expect says whether the write happens.
			writeFails := f.JournalError != nil && a.Scenario.Expect.RunError != ""
			return writeFails || (f.ModelFailure != nil && !f.Resume) || f.JournalDamage != ""
		}},
		{"run_error.kind", "always, in a `run_error`", "—", nil},
		{"run_error.message", "always, in a `run_error`", "—: a sentence (the text rule)", nil},
		{"scenario", "always", "—", nil},
		{"steps", "always", "`[]` (a refused run, a run stopped before its first step settled, a refused damaged journal); `null` reads the same", nil},
		{"steps[*].action", "always, in a step", "—", nil},
		{"steps[*].action.arguments", "when the call had an arguments object (`{}` included), or flattened arguments collected into one (0003.D6)", "absent when it had none: absence and `{}` differ", func(a At) bool {
			return str(a.Parent, "kind") == "tool_call" && (strings.Contains(str(a.Ancestors[0], "model_output"), `"arguments"`) || repairedWith(a.Parent, "collapse_flattened_arguments"))
		}},
		{"steps[*].action.code", "when `kind` is `code`", "absent", func(a At) bool { return str(a.Parent, "kind") == "code" }},
		{"steps[*].action.error", "when `kind` is `none` (0003.D7)", "absent", func(a At) bool { return str(a.Parent, "kind") == "none" }},
		{"steps[*].action.kind", "always, in an action", "—", nil},
		{"steps[*].action.repairs", "always, in an action", "`[]` when nothing was repaired; `null` reads the same", nil},
		{"steps[*].action.tool", "when `kind` is `tool_call`", "absent", func(a At) bool { return str(a.Parent, "kind") == "tool_call" }},
		{"steps[*].context_size", "in every step the reference writes; the schema lets it be left out", "`0`: absent reads as `0`", func(At) bool { return true }},
		{"steps[*].counters", "always, in a step", "—", nil},
		{"steps[*].counters.effective_steps", "always, in the counters", "`0`", nil},
		{"steps[*].counters.total_steps", "always, in the counters", "—", nil},
		{"steps[*].history_observation", "always, in a step", "—", nil},
		{"steps[*].index", "always, in a step", "—", nil},
		{"steps[*].model_input", "always, in a step", "`[]` for no messages (`null` is refused)", nil},
		{"steps[*].model_input[*].content", "always, in a message", "—", nil},
		{"steps[*].model_input[*].role", "always, in a message", "—", nil},
		{"steps[*].model_output", "always, in a step", "—", nil},
		{"steps[*].outcome", "always, in a step", "—", nil},
		{"steps[*].outcome.env_reported_completion", "always, in an outcome", "`false`", nil},
		{"steps[*].outcome.observation", "always, in an outcome", "—", nil},
		{"steps[*].outcome.observation_is_synthetic", "always, in an outcome", "`false`", nil},
		{"steps[*].outcome.observation_truncated_chars", "always, in an outcome", "`0`", nil},
		{"steps[*].outcome.status", "always, in an outcome", "—", nil},
		{"steps[*].phase", "in a multi-phase scenario", "absent", phased},
		{"steps[*].replayed", "always, in a step", "`false`", nil},
	}
}

func settlesAt(a At) bool { return settles(a.Parent) }

// observation is the outcome's observation of the step an event settles.
func observation(a At) string {
	return str(obj(stepOf(a, a.Parent)["outcome"]), "observation")
}

// turn is the scenario's scripted model output for an event's step (the
// scripted model answers by step, also when a resume asks again).
func turn(a At, ev map[string]any) string {
	n := int64(num(ev["step"]))
	for _, r := range a.Scenario.Runs() {
		if r.Name == str(ev, "phase") && n >= 1 && int(n) <= len(r.Model) {
			return r.Model[n-1].Output
		}
	}
	return ""
}

func modelOutput(a At) string {
	if st := stepOf(a, a.Parent); st != nil {
		return str(st, "model_output")
	}
	return turn(a, a.Parent)
}

func repaired(a At) bool {
	reps, _ := obj(obj(stepOf(a, a.Parent))["action"])["repairs"].([]any)
	return len(reps) > 0
}

// handlerRaised: the handler call an event reports raised (an error or a
// panic in the scenario's script). The k-th call of a tool runs the k-th
// behaviour (the last one repeats); calls a crashed process made before
// the resume whose events the golden holds come first in handler_calls.
func handlerRaised(a At) bool {
	tool := str(a.Parent, "tool")
	var script scenarios.Behaviours
	for _, t := range a.Scenario.Tools {
		if t.Name == tool {
			script = t.Handler
		}
	}
	if len(script) == 0 || str(a.Parent, "status") == "NOT_EXECUTED" {
		return false
	}
	calls := 0
	for _, c := range list(a.Root, "handler_calls") {
		if str(obj(c), "tool") == tool {
			calls++
		}
	}
	before, reached := 0, 0
	for _, e := range list(a.Root, "events") {
		ev := obj(e)
		if str(ev, "type") != "tool_call" || str(ev, "tool") != tool || str(ev, "status") == "NOT_EXECUTED" {
			continue
		}
		reached++
		if sameMap(ev, a.Parent) {
			before = reached - 1
		}
	}
	k := min(calls-reached+before, len(script)-1)
	if k < 0 {
		return false
	}
	return script[k].Error != nil || script[k].Panic != nil || script[k].EnvError != nil
}

func sameMap(x, y map[string]any) bool { return fmt.Sprintf("%p", x) == fmt.Sprintf("%p", y) }

func list(m map[string]any, k string) []any { l, _ := m[k].([]any); return l }

// released: the handler call in flight when the run was cancelled or its
// deadline passed (also on the resumed run that follows): the call of the
// interrupted step's tool after the calls of that tool in earlier steps
// of its phase.
func released(a At) bool {
	if blockedCall(a) {
		return true
	}
	spec, _ := a.Scenario.Faults.Interruption()
	if spec == nil || spec.During != "tool_call" {
		return false
	}
	tool := str(obj(a.Root["interrupted"]), "tool")
	if tool == "" {
		tool = str(obj(obj(a.Root["end"])["detail"]), "tool")
	}
	for _, s := range list(a.Root, "steps") {
		st := obj(s)
		n := int64(num(st["index"]))
		if tool == "" && str(st, "phase") == spec.Phase && int(n) == spec.Step {
			tool = str(obj(st["action"]), "tool")
		}
	}
	seen := 0
	for _, c := range list(a.Root, "handler_calls") {
		call := obj(c)
		if str(call, "tool") != tool || str(call, "phase") != spec.Phase {
			continue
		}
		if sameMap(call, a.Parent) {
			return seen == callsBefore(a, spec.Phase, spec.Step, tool)
		}
		seen++
	}
	return false
}

// blockedCall: the handler call's behaviour in the scenario's script
// blocks until the runner cancels the run (the k-th call of a tool runs
// the k-th behaviour; the last one repeats).
func blockedCall(a At) bool {
	tool := str(a.Parent, "tool")
	for _, t := range a.Scenario.Tools {
		if t.Name != tool || len(t.Handler) == 0 {
			continue
		}
		k := 0
		for _, c := range list(a.Root, "handler_calls") {
			if sameMap(obj(c), a.Parent) {
				return t.Handler[min(k, len(t.Handler)-1)].Block
			}
			if str(obj(c), "tool") == tool {
				k++
			}
		}
	}
	return false
}

// modelBlocks: a model turn of the scenario blocks until the runner
// cancels the run.
func modelBlocks(sc *scenarios.Scenario) bool {
	for _, r := range sc.Runs() {
		for _, m := range r.Model {
			if m.Block {
				return true
			}
		}
	}
	return false
}

// callsBefore counts the handler calls of tool in a phase's steps before
// step.
func callsBefore(a At, phase string, step int, tool string) int {
	k := 0
	for _, s := range list(a.Root, "steps") {
		st := obj(s)
		n := int64(num(st["index"]))
		act := obj(st["action"])
		if str(st, "phase") == phase && int(n) < step && str(act, "tool") == tool && str(obj(st["outcome"]), "status") != "NOT_EXECUTED" {
			k++
		}
	}
	return k
}

// stoppedWithoutEnd: no end, no run_error, no refusal: cancelled or past
// its deadline (a failed model call is a run_error, 0003.D3).
// crashReached reports whether the scenario's crash kills the run: a
// crash point the design never writes (unreached) does not.
func crashReached(f scenarios.Faults) bool { return f.Crash != nil && !f.Crash.Unreached }

func stoppedWithoutEnd(a At) bool {
	return a.Root["end"] == nil && !has(a.Root, "run_error") && a.Root["assembly_error"] == nil
}

// replayedHere: a step this process replayed, not one an earlier resume
// replayed and journalled (the resumed stream's run_resumed names the
// first step this process ran).
func replayedHere(root map[string]any) bool {
	evs := list(root, "events")
	first := map[string]any{}
	if len(evs) > 0 && str(obj(evs[0]), "type") == "run_resumed" {
		first = obj(evs[0])
	}
	from := int64(num(first["step"]))
	for _, s := range list(root, "steps") {
		st := obj(s)
		n := int64(num(st["index"]))
		if st["replayed"] == true && n >= from {
			return true
		}
	}
	return false
}

// instances returns every object at path in doc (segments split at
// dots; a "[*]" suffix walks an array), each with its ancestors, nearest
// first.
func instances(doc map[string]any, path string) [][]map[string]any {
	chains := [][]map[string]any{{doc}}
	if path == "" {
		return chains
	}
	for _, seg := range strings.Split(path, ".") {
		key, arr := strings.CutSuffix(seg, "[*]")
		var next [][]map[string]any
		for _, c := range chains {
			v := c[0][key]
			if arr {
				for _, e := range list(c[0], key) {
					if m := obj(e); m != nil {
						next = append(next, append([]map[string]any{m}, c...))
					}
				}
			} else if m := obj(v); m != nil {
				next = append(next, append([]map[string]any{m}, c...))
			}
		}
		chains = next
	}
	return chains
}

// CheckPresence evaluates every row's condition on every instance of its
// parent in every golden and returns each disagreement, naming the
// golden, the field and which way it disagrees. checked counts the
// evaluations, so a caller can tell a check that held from one that ran
// on nothing.
func CheckPresence(goldens map[string][]byte, all []*scenarios.Scenario) (problems []string, checked int, err error) {
	return checkRows(PresenceTable(), goldens, all)
}

func checkRows(table []Presence, goldens map[string][]byte, all []*scenarios.Scenario) (problems []string, checked int, err error) {
	byID := map[string]*scenarios.Scenario{}
	for _, sc := range all {
		byID[sc.ID] = sc
	}
	ids := make([]string, 0, len(goldens))
	for id := range goldens {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		sc, ok := byID[id]
		if !ok {
			return nil, 0, fmt.Errorf("golden %s has no scenario", id)
		}
		dec := json.NewDecoder(strings.NewReader(string(goldens[id])))
		dec.UseNumber()
		var doc map[string]any
		if err := dec.Decode(&doc); err != nil {
			return nil, 0, fmt.Errorf("golden %s: %w", id, err)
		}
		for _, row := range table {
			if row.When == nil {
				continue
			}
			parent, key := "", row.Field
			if i := strings.LastIndex(row.Field, "."); i >= 0 {
				parent, key = row.Field[:i], row.Field[i+1:]
			}
			for _, chain := range instances(doc, parent) {
				checked++
				at := At{Scenario: sc, Root: doc, Parent: chain[0], Ancestors: chain[1:]}
				want, got := row.When(at), has(chain[0], key)
				if want != got {
					verb := map[bool]string{true: "has", false: "lacks"}[got]
					problems = append(problems, fmt.Sprintf("trajectories/%s.json %s %s where docs/trajectory-format.md's presence row says %q", id, verb, row.Field, row.Present))
				}
			}
		}
	}
	return problems, checked, nil
}

// trajectoryPresence renders the presence table, after checking it: a
// row for every field of the schema and none other; "always" and a nil
// condition exactly where the schema requires the field; the null column
// from the schema; and every condition held on every golden.
func trajectoryPresence(*Env) (string, error) {
	fields, err := trajectories.Fields()
	if err != nil {
		return "", err
	}
	rows := map[string]Presence{}
	for _, r := range PresenceTable() {
		if _, dup := rows[r.Field]; dup {
			return "", fmt.Errorf("the presence table has two rows for %s", r.Field)
		}
		rows[r.Field] = r
	}
	var b strings.Builder
	b.WriteString("| field | present | `null` | empty form |\n|---|---|---|---|\n")
	var problems []string
	for _, f := range fields {
		r, ok := rows[f.Path]
		if !ok {
			problems = append(problems, fmt.Sprintf("field %s has no row in the presence table (internal/docgen/presence.go)", f.Path))
			continue
		}
		delete(rows, f.Path)
		always := strings.HasPrefix(r.Present, "always")
		if always != f.Required || (r.When == nil) != f.Required {
			problems = append(problems, fmt.Sprintf("%s: present %q with a condition %v, but the schema %s it", f.Path, r.Present, r.When != nil, map[bool]string{true: "requires", false: "does not require"}[f.Required]))
		}
		if r.Empty == "" || (strings.Contains(r.Empty, "`null` reads the same") && !f.Nullable) {
			problems = append(problems, fmt.Sprintf("%s: empty form %q (the schema %s null)", f.Path, r.Empty, map[bool]string{true: "allows", false: "refuses"}[f.Nullable]))
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", f.Path, r.Present, map[bool]string{true: "yes", false: "no"}[f.Nullable], r.Empty)
	}
	for p := range rows {
		problems = append(problems, fmt.Sprintf("the presence table has a row for %s, which the schema does not have", p))
	}
	goldens, err := trajectories.Goldens()
	if err != nil {
		return "", err
	}
	all, err := scenarios.LoadAll(scenarios.Embedded())
	if err != nil {
		return "", err
	}
	found, checked, err := CheckPresence(goldens, all)
	if err != nil {
		return "", err
	}
	if checked == 0 {
		problems = append(problems, "no condition was evaluated on any golden")
	}
	if problems = append(problems, found...); len(problems) > 0 {
		sort.Strings(problems)
		return "", fmt.Errorf("the presence table disagrees with the schema or the goldens:\n%s", strings.Join(problems, "\n"))
	}
	return b.String(), nil
}

func repairedWith(action map[string]any, repair string) bool {
	for _, r := range list(action, "repairs") {
		if r == repair {
			return true
		}
	}
	return false
}

// num reads a JSON number as an int; anything else is 0.
func num(v any) int {
	n, _ := v.(json.Number)
	i, _ := n.Int64()
	return int(i)
}
