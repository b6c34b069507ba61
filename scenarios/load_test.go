package scenarios

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

// TestBadInputCorpus: every file in testdata/bad must be refused with a
// message that names file:line and says what to fix.
func TestBadInputCorpus(t *testing.T) {
	want := map[string][]string{
		"bad.bad-decision-id.yaml":    {"bad.bad-decision-id.yaml:3: at /decisions/0: '8.D2' does not match pattern"},
		"bad.duplicate-key.yaml":      {`bad.duplicate-key.yaml:12: key "level" appears twice`},
		"bad.empty.yaml":              {"bad.empty.yaml: file is empty"},
		"bad.id-mismatch.yaml":        {`bad.id-mismatch.yaml:1: id "bad.some-other-name" does not match the file name`, "name the file bad.some-other-name.yaml"},
		"bad.id-with-path.yaml":       {"bad.id-with-path.yaml:1: at /id: '../../etc/passwd' does not match pattern"},
		"bad.missing-id.yaml":         {"bad.missing-id.yaml:1: at (top level): missing property 'id'"},
		"bad.no-expectation.yaml":     {"bad.no-expectation.yaml:11: expect must say how the run ends"},
		"bad.not-a-mapping.yaml":      {"bad.not-a-mapping.yaml:1: at (top level): got array, want object"},
		"bad.request-and-phases.yaml": {"bad.request-and-phases.yaml:13: give either request (one run) or phases"},
		"bad.pins-executor-sentence.yaml": {
			"bad.pins-executor-sentence.yaml:12: expect.step[0] pins the observation of a NOT_EXECUTED or synthetic outcome: the design leaves this wording to the implementation",
			"bad.pins-executor-sentence.yaml:14: expect.events[0] pins the executor's sentence",
			"bad.pins-executor-sentence.yaml:16: expect.fields assembly_error.message pins a field of class text",
		},
		"bad.unclosed-bracket.yaml":              {"bad.unclosed-bracket.yaml:6: YAML: did not find expected ',' or ']'"},
		"bad.crash-on-resume-without-crash.yaml": {"bad.crash-on-resume-without-crash.yaml:13: faults.crash_on_resume kills the process that resumes after a crash: add faults.crash"},
		"bad.crash-on-resume-damaged.yaml":       {"bad.crash-on-resume-damaged.yaml:14: faults.crash_on_resume cannot go with journal_damage"},
		"bad.torn-without-crash.yaml":            {"bad.torn-without-crash.yaml:12: torn_tail needs a crash fault"},
		"bad.two-behaviours.yaml":                {"bad.two-behaviours.yaml:7: at /tools/0/handler: maxProperties: got 2, want 1"},
		"bad.unreached-torn.yaml":                {"bad.unreached-torn.yaml:13: an unreached crash point kills nothing the design runs"},
		"bad.unknown-capability.yaml":            {"bad.unknown-capability.yaml:5: at /requires/1: value must be one of"},
		"bad.unknown-field.yaml":                 {"bad.unknown-field.yaml:8: at /request: additional properties 'budjet' not allowed"},
		"bad.wrong-reason.yaml":                  {"bad.wrong-reason.yaml:11: at /expect/end/reason: value must be one of"},
		"bad.wrong-type.yaml":                    {"bad.wrong-type.yaml:8: at /request/budget/max_total_steps: got string, want integer"},
		"bad.yaml-syntax.yaml":                   {"bad.yaml-syntax.yaml:3: YAML: mapping values are not allowed"},
	}
	files, err := filepath.Glob("testdata/bad/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus: %v", err)
	}
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			wants, ok := want[name]
			if !ok {
				t.Fatalf("%s has no expected error in this table; add one", name)
			}
			data, _ := os.ReadFile(f)
			_, err := Parse(name, data)
			var le *LoadError
			if !errors.As(err, &le) {
				t.Fatalf("err = %v, want a LoadError", err)
			}
			for _, w := range wants {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
	if len(files) != len(want) {
		t.Errorf("%d corpus files, %d table entries", len(files), len(want))
	}
}

func TestLimits(t *testing.T) {
	t.Run("oversized file", func(t *testing.T) {
		_, err := Parse("big.yaml", make([]byte, MaxFileBytes+1))
		if err == nil || !strings.Contains(err.Error(), "limited to") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("alias bomb", func(t *testing.T) {
		var b strings.Builder
		b.WriteString("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
		for i := 1; i < 9; i++ {
			b.WriteString("a" + string(rune('0'+i)) + ": &a" + string(rune('0'+i)) + " [")
			for j := 0; j < 10; j++ {
				if j > 0 {
					b.WriteString(", ")
				}
				b.WriteString("*a" + string(rune('0'+i-1)))
			}
			b.WriteString("]\n")
		}
		_, err := Parse("bomb.yaml", []byte(b.String()))
		if err == nil {
			t.Fatal("alias bomb accepted")
		}
		if !strings.Contains(err.Error(), "YAML") && !strings.Contains(err.Error(), "nodes") {
			t.Errorf("err = %v", err)
		}
	})
}

func TestLoadAll_duplicateIDsAndEveryProblem(t *testing.T) {
	good, err := os.ReadFile("outcome.normal-return.yaml")
	if err != nil {
		t.Fatal(err)
	}
	fsys := fstest.MapFS{
		"a.first.yaml":  {Data: []byte(strings.Replace(string(good), "id: outcome.normal-return", "id: a.first", 1))},
		"b.second.yaml": {Data: []byte(strings.Replace(string(good), "id: outcome.normal-return", "id: a.first", 1))},
		"c.third.yaml":  {Data: []byte("id: c.third\n")},
	}
	_, err = LoadAll(fsys)
	if err == nil {
		t.Fatal("accepted")
	}
	for _, w := range []string{`b.second.yaml:1: id "a.first" does not match the file name`, "c.third.yaml:1: at (top level): missing properties", "c.third.yaml:1: no request"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error lacks %q:\n%v", w, err)
		}
	}
	fsys = fstest.MapFS{
		"a.first.yaml":     {Data: []byte(strings.Replace(string(good), "id: outcome.normal-return", "id: a.first", 1))},
		"sub/a.first.yaml": {Data: []byte("ignored: true\n")},
	}
	scs, err := LoadAll(fsys)
	if err != nil || len(scs) != 1 {
		t.Errorf("LoadAll reads only the top level: %v %d", err, len(scs))
	}
}

// TestEmbeddedSuite loads the real scenarios: every one must be valid and
// the IDs the issue fixes must all exist.
func TestEmbeddedSuite(t *testing.T) {
	scs, err := LoadAll(Embedded())
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, sc := range scs {
		ids[sc.ID] = true
		if !IDPattern.MatchString(sc.ID) {
			t.Errorf("bad id %q", sc.ID)
		}
	}
	required := strings.Fields(`executor.missing-handler executor.missing-handler-all-named executor.missing-handler-excluded-by-restrict
executor.registry-mismatch outcome.normal-return outcome.no-tool-call outcome.handler-error-executed
outcome.env-error outcome.cancelled-passes-through validation.unknown-tool validation.schema-type-mismatch
validation.missing-required-argument validation.no-coercion parse.fenced-json parse.flattened-arguments
parse.flattened-only-tool-name parse.unparseable-output budget.invalid-calls-burn-total
budget.effective-cap budget.per-request-phases completion.by-tool completion.by-environment
completion.tool-with-handler-error history.synthetic-observations
context.order context.injections-sorted context.empty-injection context.template-without-placeholder
events.raw-and-repaired events.sink-failure-continues cancel.during-model-call cancel.during-tool-call
resume.safe-replayed resume.never-not-replayed resume.after-end resume.model-output-recorded
restrict.handlers-travel`)
	for _, id := range required {
		if !ids[id] {
			t.Errorf("required scenario %s is missing", id)
		}
	}
	govdoc := 0
	for id := range ids {
		if strings.HasPrefix(id, "govdoc.") {
			govdoc++
		}
	}
	if len(scs) < 60 || govdoc < 3 {
		t.Errorf("%d scenarios (%d govdoc), want at least 60 and a govdoc pack", len(scs), govdoc)
	}
}

// TestLoadEmbeddedIsLoadedOnce: LoadEmbedded gives what LoadAll(Embedded())
// gives, parses once per process (the same scenarios on every call), and
// hands each caller a slice of its own to filter.
func TestLoadEmbeddedIsLoadedOnce(t *testing.T) {
	want, err := LoadAll(Embedded())
	if err != nil {
		t.Fatal(err)
	}
	a, err := LoadEmbedded()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := LoadEmbedded()
	if len(a) != len(want) || len(b) != len(want) {
		t.Fatalf("LoadEmbedded: %d and %d scenarios, LoadAll: %d", len(a), len(b), len(want))
	}
	for i := range want {
		if a[i].ID != want[i].ID || a[i].File != want[i].File {
			t.Errorf("scenario %d: LoadEmbedded has %s (%s), LoadAll %s (%s)", i, a[i].ID, a[i].File, want[i].ID, want[i].File)
		}
		if a[i] != b[i] {
			t.Errorf("%s: parsed again on the second call", a[i].ID)
		}
	}
	a[0] = nil
	if b[0] == nil {
		t.Error("two callers share one slice: filtering one changes the other's")
	}
}

// TestParse_integersPast64BitsKeptExact: yaml.v3 resolves an integer that
// does not fit 64 bits to a float64; the loader keeps the written integer
// in schemas and expectations, so a bound or an expected argument is the
// number the author wrote (0006.D6.exact-numbers).
func TestParse_integersPast64BitsKeptExact(t *testing.T) {
	src := `id: t.big
title: t
decisions: [0008.D2]
level: MUST
requires: [json-actions]
tools:
  - name: t
    parameters: {type: object, properties: {n: {type: integer, minimum: 18446744073709551617, maximum: 9007199254740993}}}
request:
  budget: {max_effective_steps: 1, max_total_steps: 1}
  model: []
expect:
  step:
    - {index: 1, arguments: {n: -18446744073709551617}}
  fields:
    steps[0].action.arguments.n: 36893488147419103233
  end: {reason: total_budget_exhausted}
`
	sc, err := Parse("t.big.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	n := sc.Tools[0].Parameters["properties"].(map[string]any)["n"].(map[string]any)
	for key, want := range map[string]string{"minimum": "18446744073709551617", "maximum": "9007199254740993"} {
		if got := fmt.Sprint(n[key]); got != want {
			t.Errorf("parameters n.%s = %s, want %s", key, got, want)
		}
	}
	if got := fmt.Sprint(sc.Expect.Step[0].Arguments.(map[string]any)["n"]); got != "-18446744073709551617" {
		t.Errorf("expected argument n = %s, want -18446744073709551617", got)
	}
	if got := fmt.Sprint(sc.Expect.Fields["steps[0].action.arguments.n"]); got != "36893488147419103233" {
		t.Errorf("expected field = %s, want 36893488147419103233", got)
	}
}

// TestInexact: only a literal no float64 holds is kept as written; an
// ordinary decimal stays a float64, and a huge exponent is not computed.
func TestInexact(t *testing.T) {
	for lit, want := range map[string]bool{
		"9007199254740993": true, "9007199254740992": false, "18446744073709551617": true,
		"9007199254740993.9": true, "0.1": false, "1.5": false, "-3": false, "1e999": false,
		"1e99999999": false, "0x10": false, "1_000": false, "+1": false, "2.0": false,
	} {
		if got := inexact(lit); got != want {
			t.Errorf("inexact(%s) = %v, want %v", lit, got, want)
		}
	}
}
