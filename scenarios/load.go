package scenarios

import (
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"math/big"
	"path"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/polyloop/polyloop-conform/internal/schema"
	"github.com/polyloop/polyloop-conform/trajectories"
)

//go:embed *.yaml scenario.schema.json
var embedded embed.FS

// Embedded returns the scenarios built into the binary.
func Embedded() fs.FS { return embedded }

// SchemaFile is the scenario schema's file name.
const SchemaFile = "scenario.schema.json"

// MaxFileBytes bounds a scenario file; larger files are refused unread.
const MaxFileBytes = 1 << 20

// maxNodes bounds the YAML nodes visited, so alias bombs fail fast, and
// maxDepth bounds nesting, so a self-referencing alias cannot recurse.
const (
	maxNodes = 200_000
	maxDepth = 64
)

// IDPattern is what a scenario ID looks like; it cannot hold a path
// separator or "..", so it is safe to use as a file name.
var IDPattern = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*(\.[a-z0-9]+(-[a-z0-9]+)*)+$`)

var compiled = sync.OnceValues(func() (*schema.Schema, error) {
	doc, err := embedded.ReadFile(SchemaFile)
	if err != nil {
		return nil, err
	}
	return schema.Compile(SchemaFile, doc)
})

// Problem is one thing wrong with a scenario file, at a line.
type Problem struct {
	File string
	Line int
	Msg  string
}

func (p Problem) String() string {
	if p.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Msg)
	}
	return fmt.Sprintf("%s: %s", p.File, p.Msg)
}

// LoadError lists every problem found in one or more scenario files.
type LoadError struct {
	Problems []Problem
}

func (e *LoadError) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// Parse reads one scenario file. name is the file's path, used in errors
// and checked against the scenario's id.
func Parse(name string, data []byte) (*Scenario, error) {
	fail := func(line int, format string, args ...any) error {
		return &LoadError{Problems: []Problem{{File: name, Line: line, Msg: fmt.Sprintf(format, args...)}}}
	}
	if len(data) > MaxFileBytes {
		return nil, fail(0, "file is %d bytes; scenarios are limited to %d bytes, split it into several scenarios", len(data), MaxFileBytes)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, yamlError(name, err)
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, fail(0, "file is empty; a scenario needs at least id, title, decisions, level, requires, tools, a request and expect")
	}
	root := doc.Content[0]
	lines := map[string]int{}
	budget := maxNodes
	generic, err := toGeneric(root, "", lines, &budget)
	if err != nil {
		var le *LoadError
		if errors.As(err, &le) {
			for i := range le.Problems {
				le.Problems[i].File = name
			}
		}
		return nil, err
	}
	shape := shapeProblems(name, generic, lines)
	sch, err := compiled()
	if err != nil {
		return nil, err
	}
	if probs := sch.Validate(generic); len(probs) > 0 || len(shape) > 0 {
		le := &LoadError{Problems: shape}
		for _, p := range probs {
			if len(shape) > 0 && covered(p) {
				continue
			}
			le.Problems = append(le.Problems, Problem{File: name, Line: problemLine(lines, p), Msg: describe(p)})
		}
		sort.SliceStable(le.Problems, func(i, j int) bool { return le.Problems[i].Line < le.Problems[j].Line })
		return nil, le
	}
	var sc Scenario
	if err := root.Decode(&sc); err != nil {
		return nil, yamlError(name, err)
	}
	sc.File, sc.lines = name, lines
	keepExactIntegers(&sc, generic)
	if err := check(&sc); err != nil {
		return nil, err
	}
	return &sc, nil
}

// shapeProblems catches the mistakes whose schema messages ("'not'
// failed", one line per oneOf branch) would not tell a person what to do.
func shapeProblems(name string, doc any, lines map[string]int) []Problem {
	top, ok := doc.(map[string]any)
	if !ok {
		return nil
	}
	var out []Problem
	_, hasReq := top["request"]
	_, hasPhases := top["phases"]
	switch {
	case hasReq && hasPhases:
		out = append(out, Problem{File: name, Line: lines["/phases"], Msg: "give either request (one run) or phases (several runs sharing the definition), not both"})
	case !hasReq && !hasPhases:
		out = append(out, Problem{File: name, Line: 1, Msg: "no request: add request (one run) or phases (several runs sharing the definition)"})
	}
	if exp, ok := top["expect"].(map[string]any); ok {
		_, a := exp["assembly_error"]
		_, e := exp["end"]
		_, r := exp["run_error"]
		_, i := exp["interrupted"]
		if !a && !e && !r && !i {
			out = append(out, Problem{File: name, Line: lines["/expect"], Msg: "expect must say how the run ends: add end, assembly_error, run_error or interrupted"})
		}
	}
	return out
}

// covered reports schema problems that shapeProblems already explains
// better: the request/phases choice and the expect block's end.
func covered(p schema.Problem) bool {
	switch {
	case p.Pointer == "" && (strings.Contains(p.Message, "'not' failed") || strings.Contains(p.Message, "missing property 'request'") || strings.Contains(p.Message, "missing property 'phases'")):
		return true
	case p.Pointer == "/expect" && strings.HasPrefix(p.Message, "missing property"):
		return true
	}
	return false
}

var additional = regexp.MustCompile(`^additional properties? '([^']+)'`)

// problemLine points an "additional property" problem at the offending
// key rather than at its parent mapping.
func problemLine(lines map[string]int, p schema.Problem) int {
	if m := additional.FindStringSubmatch(p.Message); m != nil {
		if l, ok := lines[p.Pointer+"/"+m[1]]; ok {
			return l
		}
	}
	return lineOf(lines, p.Pointer)
}

func describe(p schema.Problem) string {
	ptr := p.Pointer
	if ptr == "" {
		ptr = "(top level)"
	}
	return fmt.Sprintf("at %s: %s (see scenarios/scenario.schema.json)", ptr, p.Message)
}

func lineOf(lines map[string]int, ptr string) int {
	for p := ptr; ; {
		if l, ok := lines[p]; ok {
			return l
		}
		i := strings.LastIndexByte(p, '/')
		if i < 0 {
			return 0
		}
		p = p[:i]
	}
}

var yamlLine = regexp.MustCompile(`^yaml: (?:unmarshal errors:\n\s*)?line (\d+): (.*)`)

func yamlError(name string, err error) error {
	msg := err.Error()
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		if strings.HasPrefix(m[2], "did not find expected") {
			// yaml.v3 reports these (an unclosed [ or {) at the 0-based line
			// of the bracket, its other errors 1-based: point at the bracket.
			n++
		}
		return &LoadError{Problems: []Problem{{File: name, Line: n, Msg: "YAML: " + m[2]}}}
	}
	return &LoadError{Problems: []Problem{{File: name, Msg: "YAML: " + strings.TrimPrefix(msg, "yaml: ")}}}
}

// toGeneric turns a YAML node into JSON-like values for schema validation
// and records the line of every JSON pointer.
func toGeneric(n *yaml.Node, ptr string, lines map[string]int, budget *int) (any, error) {
	*budget--
	if strings.Count(ptr, "/") > maxDepth {
		return nil, &LoadError{Problems: []Problem{{Line: n.Line, Msg: fmt.Sprintf("nested deeper than %d levels (a self-referencing alias?); simplify the file", maxDepth)}}}
	}
	if *budget < 0 {
		return nil, &LoadError{Problems: []Problem{{Line: n.Line, Msg: fmt.Sprintf("more than %d YAML nodes (aliases expanded); simplify the file", maxNodes)}}}
	}
	lines[ptr] = n.Line
	switch n.Kind {
	case yaml.AliasNode:
		return toGeneric(n.Alias, ptr, lines, budget)
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode {
				return nil, &LoadError{Problems: []Problem{{Line: k.Line, Msg: "mapping keys must be plain strings"}}}
			}
			if _, dup := m[k.Value]; dup {
				return nil, &LoadError{Problems: []Problem{{Line: k.Line, Msg: fmt.Sprintf("key %q appears twice in the same mapping", k.Value)}}}
			}
			child := ptr + "/" + strings.ReplaceAll(strings.ReplaceAll(k.Value, "~", "~0"), "/", "~1")
			val, err := toGeneric(v, child, lines, budget)
			if err != nil {
				return nil, err
			}
			m[k.Value] = val
		}
		return m, nil
	case yaml.SequenceNode:
		s := make([]any, 0, len(n.Content))
		for i, c := range n.Content {
			val, err := toGeneric(c, ptr+"/"+strconv.Itoa(i), lines, budget)
			if err != nil {
				return nil, err
			}
			s = append(s, val)
		}
		return s, nil
	case yaml.ScalarNode:
		if t := n.ShortTag(); (t == "!!int" || t == "!!float") && n.Style == 0 && inexact(n.Value) {
			// Kept as written: yaml.v3 resolves an integer past 64 bits to
			// a float64, which would round 18446744073709551617 in a schema
			// bound or an expected argument, and a decimal that no float64
			// holds (9007199254740993.9) likewise (0006.D6.exact-numbers).
			return json.Number(n.Value), nil
		}
		var v any
		if err := n.Decode(&v); err != nil {
			return nil, &LoadError{Problems: []Problem{{Line: n.Line, Msg: "YAML: " + err.Error()}}}
		}
		switch x := v.(type) {
		case int:
			return json.Number(strconv.Itoa(x)), nil
		case int64:
			return json.Number(strconv.FormatInt(x, 10)), nil
		case uint64:
			return json.Number(strconv.FormatUint(x, 10)), nil
		case float64:
			if math.IsInf(x, 0) || math.IsNaN(x) {
				return nil, &LoadError{Problems: []Problem{{Line: n.Line, Msg: "numbers must be finite"}}}
			}
			return json.Number(strconv.FormatFloat(x, 'g', -1, 64)), nil
		}
		return v, nil
	}
	return nil, &LoadError{Problems: []Problem{{Line: n.Line, Msg: "unsupported YAML node"}}}
}

// keepExactIntegers puts back, from generic (the document as toGeneric
// read it), every integer that yaml.v3 decoded into a float64 because it
// does not fit 64 bits: in the tools' parameter schemas, the expected
// arguments and the expected fields, where a rounded bound or value would
// make the scenario check another number (0006.D6.exact-numbers).
func keepExactIntegers(sc *Scenario, generic any) {
	at := func(v any, keys ...any) any {
		for _, k := range keys {
			switch key := k.(type) {
			case string:
				m, _ := v.(map[string]any)
				v = m[key]
			case int:
				s, _ := v.([]any)
				if key >= len(s) {
					return nil
				}
				v = s[key]
			}
		}
		return v
	}
	for i := range sc.Tools {
		if p, ok := exactIntegers(sc.Tools[i].Parameters, at(generic, "tools", i, "parameters")).(map[string]any); ok {
			sc.Tools[i].Parameters = p
		}
	}
	for i := range sc.Expect.Step {
		sc.Expect.Step[i].Arguments = exactIntegers(sc.Expect.Step[i].Arguments, at(generic, "expect", "step", i, "arguments"))
	}
	for k, v := range sc.Expect.Fields {
		sc.Expect.Fields[k] = exactIntegers(v, at(generic, "expect", "fields", k))
	}
}

// exactIntegers returns decoded with each float64 that generic holds as
// a number literal no float64 holds exactly replaced by that literal;
// decoded is changed in place.
func exactIntegers(decoded, generic any) any {
	switch d := decoded.(type) {
	case float64:
		if n, ok := generic.(json.Number); ok && inexact(string(n)) {
			return n
		}
	case map[string]any:
		g, _ := generic.(map[string]any)
		for k, v := range d {
			d[k] = exactIntegers(v, g[k])
		}
	case []any:
		g, _ := generic.([]any)
		for i, v := range d {
			if i < len(g) {
				d[i] = exactIntegers(v, g[i])
			}
		}
	}
	return decoded
}

// jsonNumber is a number literal in JSON's grammar (no sign but a minus,
// no leading zero, no base prefix, no digit separator).
var jsonNumber = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)

// inexact reports whether lit is a JSON number literal whose value no
// float64 holds: an integer past 2^53 that is not a multiple of a power
// of two, a decimal with more digits than a double keeps. Others stay as
// yaml.v3 decodes them.
func inexact(lit string) bool {
	if !jsonNumber.MatchString(lit) || len(lit) > 400 {
		return false
	}
	if i := strings.IndexAny(lit, "eE"); i >= 0 {
		// A large exponent costs big arithmetic, and past a double's
		// range the value is refused as not finite anyway.
		if e, err := strconv.Atoi(strings.TrimPrefix(lit[i+1:], "+")); err != nil || e > 400 || e < -400 {
			return false
		}
	}
	exact, ok := new(big.Rat).SetString(lit)
	if !ok {
		return false
	}
	f, _ := exact.Float64()
	if math.IsInf(f, 0) {
		return false // refused below: numbers must be finite
	}
	back, _ := new(big.Rat).SetString(strconv.FormatFloat(f, 'g', -1, 64))
	return back == nil || back.Cmp(exact) != 0
}

// check applies the rules a schema cannot express.
func check(sc *Scenario) error {
	var probs []Problem
	add := func(ptr, format string, args ...any) {
		probs = append(probs, Problem{File: sc.File, Line: sc.Line(ptr), Msg: fmt.Sprintf(format, args...)})
	}
	if sc.File != "" {
		stem := strings.TrimSuffix(path.Base(sc.File), path.Ext(sc.File))
		if stem != sc.ID {
			add("/id", "id %q does not match the file name %q; name the file %s.yaml", sc.ID, path.Base(sc.File), sc.ID)
		}
	}
	// Duplicate tool names are not refused here: registry construction
	// must refuse them, and registry.duplicate-name checks that it does.
	names := map[string]bool{}
	for i, r := range sc.Phases {
		if names[r.Name] {
			add(fmt.Sprintf("/phases/%d/name", i), "phase name %q is used twice", r.Name)
		}
		names[r.Name] = true
	}
	for i, r := range sc.Runs() {
		base := "/request"
		if sc.Request == nil {
			base = fmt.Sprintf("/phases/%d", i)
		}
		if r.Executor == ExecutorProject && len(r.ProjectExecutor) == 0 {
			add(base+"/executor", "executor: project needs a project_executor script")
		}
		if r.Executor != ExecutorProject && len(r.ProjectExecutor) > 0 {
			add(base+"/project_executor", "project_executor is only used with executor: project")
		}
	}
	// A fault names its phase in a phased scenario, and only there.
	checkPhase := func(fault, phase, which string) {
		switch {
		case sc.Request != nil && phase != "":
			add("/faults/"+fault+"/phase", "phase %q names a phase, but the scenario has a single request; leave phase out", phase)
		case sc.Request == nil && !names[phase]:
			add("/faults/"+fault+"/phase", "phase %q is not one of the scenario's phases; a phased scenario's %s names the phase %s", phase, fault, which)
		}
	}
	if c := sc.Faults.Crash; c != nil {
		checkPhase("crash", c.Phase, "whose journal write it stops at")
		if c.Unreached && (sc.Faults.TornTail || sc.Faults.JournalDamage != "" || sc.Faults.CrashOnResume != nil) {
			add("/faults/crash/unreached", "an unreached crash point kills nothing the design runs, so there is no journal to tear or damage and no resume to crash again; leave torn_tail, journal_damage and crash_on_resume out")
		}
	}
	checkCrashOnResume(sc, add)
	if sc.Faults.TornTail && sc.Faults.Crash == nil {
		add("/faults/torn_tail", "torn_tail needs a crash fault to follow")
	}
	if sc.Faults.JournalDamage != "" && sc.Faults.Crash == nil {
		add("/faults/journal_damage", "journal_damage needs a crash fault to follow")
	}
	if sc.Faults.JournalDamage != "" && sc.Faults.TornTail {
		add("/faults/journal_damage", "journal_damage and torn_tail are two different damages; give one")
	}
	if sc.Faults.Cancel != nil && sc.Faults.Deadline != nil {
		add("/faults/deadline", "give a cancel or a deadline, not both: a run stops once")
	}
	if in, deadline := sc.Faults.Interruption(); in != nil {
		fault := "cancel"
		if deadline {
			fault = "deadline"
		}
		checkPhase(fault, in.Phase, "it stops in")
	}
	if sc.Faults.Resume && sc.Faults.Cancel == nil && sc.Faults.Deadline == nil && sc.Faults.ModelFailure == nil && !blocks(sc) {
		add("/faults/resume", "resume follows a run that stopped without an end: add a cancel, deadline or model_failure fault, or a blocking model turn or handler")
	}
	if sc.Faults.Resume && sc.Faults.Crash != nil {
		add("/faults/resume", "a crash is always resumed; resume is for runs that stopped without an end")
	}
	if in, _ := sc.Faults.Interruption(); sc.Faults.Resume && sc.Request == nil && in == nil {
		add("/faults/resume", "in a phased scenario, resume follows a cancel or a deadline that names the phase to resume")
	}
	if i := sc.Expect.Interrupted; i != nil && (sc.Request == nil) != (i.Phase != "") {
		add("/expect/interrupted", "expect.interrupted names the phase in flight in a phased scenario, and only there")
	}
	if sc.Expect.Interrupted != nil && sc.Expect.End != nil {
		add("/expect", "expect both an interruption and an end; a cancelled run has no end")
	}
	if sc.Expect.AssemblyError != nil && sc.Expect.End != nil && sc.Request != nil {
		// In a phased scenario a later phase's refusal keeps the end of the
		// last phase that started (0003.D1.end).
		add("/expect", "expect both an assembly error and an end; a refused run has no end (only a later phase of a phased scenario may be refused after an earlier one ended)")
	}
	for _, p := range textPins(&sc.Expect) {
		add(p.ptr, "%s", p.msg)
	}
	if len(probs) > 0 {
		return &LoadError{Problems: probs}
	}
	return nil
}

// blocks reports whether some model turn or handler blocks until cancelled.
func blocks(sc *Scenario) bool {
	for _, t := range sc.Tools {
		for _, b := range t.Handler {
			if b.Block {
				return true
			}
		}
	}
	for _, r := range sc.Runs() {
		for _, m := range r.Model {
			if m.Block {
				return true
			}
		}
	}
	return false
}

type pin struct{ ptr, msg string }

// textPins finds expectations that pin wording the design leaves to the
// implementation: a field of class text, an executor's own sentence for a
// NOT_EXECUTED or synthetic outcome, or such a sentence in an event. Such
// an expectation would fail every implementation that words it otherwise,
// which is a false alarm, not a finding. The reference's exact words are
// still compared in the strict profile (run --strict) through the golden.
func textPins(e *Expect) []pin {
	const why = "the design leaves this wording to the implementation (0008.D4: \"a sentence the executor writes itself\"); expect what the design decides instead (status, observation_is_synthetic, history_observation), or see docs/trajectory-format.md"
	var out []pin
	keys := make([]string, 0, len(e.Fields))
	for k := range e.Fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		class, ok, err := trajectories.DeclaredClass(k)
		if err != nil {
			out = append(out, pin{"/expect/fields", err.Error()})
			continue
		}
		if ok && (class == "text" || class == trajectories.ClassTextIfSynthetic) {
			out = append(out, pin{"/expect/fields/" + k, fmt.Sprintf("expect.fields %s pins a field of class %s: %s", k, class, why)})
		}
	}
	for i, st := range e.Step {
		synthetic := st.Status == "NOT_EXECUTED" || (st.ObservationIsSynthetic != nil && *st.ObservationIsSynthetic)
		if synthetic && (st.Observation != nil || st.ObservationContains != "") {
			out = append(out, pin{fmt.Sprintf("/expect/step/%d", i), fmt.Sprintf("expect.step[%d] pins the observation of a NOT_EXECUTED or synthetic outcome: %s", i, why)})
		}
	}
	for i, ev := range e.Events {
		if ev.Observation != "" && ev.Status == "NOT_EXECUTED" {
			out = append(out, pin{fmt.Sprintf("/expect/events/%d", i), fmt.Sprintf("expect.events[%d] pins the executor's sentence for a NOT_EXECUTED action: %s", i, why)})
		}
	}
	return out
}

// embeddedSuite is the built-in suite parsed and validated on first use,
// once per process. It is a read-only cache, not mutable state: the files
// are compiled into the binary and cannot change, and nothing writes to a
// Scenario after Parse returns it (code that needs a changed scenario
// copies it first, as crashpoint.WithoutCrash does).
var embeddedSuite = sync.OnceValues(func() ([]*Scenario, error) { return LoadAll(embedded) })

// LoadEmbedded returns the built-in suite as LoadAll(Embedded()) does,
// parsed and validated once per process (a run, and every test of a
// package, would otherwise pay the YAML parse and schema check each time
// they ask). The slice is the caller's own, to filter or reorder; the
// scenarios it points to are shared and must not be modified.
func LoadEmbedded() ([]*Scenario, error) {
	scs, err := embeddedSuite()
	if err != nil {
		return nil, err
	}
	return slices.Clone(scs), nil
}

// LoadAll reads every *.yaml file at the top of fsys, sorted by name, and
// refuses duplicate IDs. All problems of all files are reported together.
func LoadAll(fsys fs.FS) ([]*Scenario, error) {
	names, err := fs.Glob(fsys, "*.yaml")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	var out []*Scenario
	le := &LoadError{}
	ids := map[string]string{}
	for _, n := range names {
		data, err := fs.ReadFile(fsys, n)
		if err != nil {
			le.Problems = append(le.Problems, Problem{File: n, Msg: err.Error()})
			continue
		}
		sc, err := Parse(n, data)
		if err != nil {
			var e *LoadError
			if errors.As(err, &e) {
				le.Problems = append(le.Problems, e.Problems...)
				continue
			}
			return nil, err
		}
		if prev, dup := ids[sc.ID]; dup {
			le.Problems = append(le.Problems, Problem{File: n, Line: sc.Line("/id"), Msg: fmt.Sprintf("id %q is already used by %s", sc.ID, prev)})
			continue
		}
		ids[sc.ID] = n
		out = append(out, sc)
	}
	if len(le.Problems) > 0 {
		return nil, le
	}
	return out, nil
}

// checkCrashOnResume applies the rules of a second crash: it follows a
// first one, in a single request, and the journal the second process
// resumes is the one the first left, neither damaged nor torn.
func checkCrashOnResume(sc *Scenario, add func(ptr, format string, args ...any)) {
	c := sc.Faults.CrashOnResume
	if c == nil {
		return
	}
	const ptr = "/faults/crash_on_resume"
	switch {
	case sc.Faults.Crash == nil:
		add(ptr, "faults.crash_on_resume kills the process that resumes after a crash: add faults.crash, the first process's crash point")
	case sc.Request == nil:
		add(ptr, "faults.crash_on_resume is for a single-request scenario; a phased scenario states one crash")
	case c.Phase != "":
		add(ptr+"/phase", "phase %q names a phase, but the scenario has a single request; leave phase out", c.Phase)
	}
	if sc.Faults.JournalDamage != "" {
		add(ptr, "faults.crash_on_resume cannot go with journal_damage: resume refuses a damaged journal, so no second process runs to crash")
	}
	if sc.Faults.TornTail {
		add(ptr, "faults.crash_on_resume cannot go with torn_tail: give the tear its own scenario with one crash")
	}
}
