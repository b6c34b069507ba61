package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/polyloop/polyloop-conform/internal/protocol"
)

func copyGolden(t *testing.T, dir, id string, edit func(string) string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("../../trajectories", id+".json"))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, id+".json")
	if err := os.WriteFile(p, []byte(edit(string(data))), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func same(s string) string { return s }

// mustReplace fails the test when old is absent, so an edit never
// silently leaves a file unchanged.
func mustReplace(t *testing.T, s, old, new string) string {
	t.Helper()
	if !strings.Contains(s, old) {
		t.Fatalf("%q not found", old)
	}
	return strings.Replace(s, old, new, 1)
}

func TestVerify(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	copyGolden(t, dir, "outcome.env-error", same)
	copyGolden(t, dir, "context.order", func(s string) string { return mustReplace(t, s, `"context_size": 81`, `"context_size": 85`) })
	code, out, _ := run(t, "verify", dir)
	if code != ExitFail || !strings.Contains(out, "steps[0].context_size: want 81, got 85") || !strings.Contains(out, "1 passed, 1 failed") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	code, out, _ = run(t, "verify", "--ignore", "steps[*].context_size", dir)
	if code != ExitOK {
		t.Errorf("with --ignore: exit %d\n%s", code, out)
	}
	ign := filepath.Join(t.TempDir(), "ignore.txt")
	os.WriteFile(ign, []byte("# our tokenizer differs\nsteps[*].context_size\n"), 0o644)
	if code, out, _ = run(t, "verify", "--ignore-file", ign, dir); code != ExitOK {
		t.Errorf("with --ignore-file: exit %d\n%s", code, out)
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`{"format":"polyloop.trajectory/v1","scenario":"x.y"}`), 0o644)
	code, out, _ = run(t, "verify", bad)
	if code != ExitFail || !strings.Contains(out, "missing properties") {
		t.Errorf("schema-invalid file: exit %d\n%s", code, out)
	}
}

func TestDiffAndValidate(t *testing.T) {
	dir := t.TempDir()
	a := copyGolden(t, dir, "outcome.env-error", same)
	b := filepath.Join(dir, "after.json")
	data, _ := os.ReadFile(a)
	os.WriteFile(b, []byte(mustReplace(t, string(data), `"status": "ENV_ERROR"`, `"status": "EXECUTED"`)), 0o644)
	code, out, _ := run(t, "diff", a, b)
	if code != ExitFail || !strings.Contains(out, "steps[0].outcome.status: want ENV_ERROR, got EXECUTED") {
		t.Errorf("diff: exit %d\n%s", code, out)
	}
	code, out, _ = run(t, "diff", "--json", a, b)
	if code != ExitFail || !strings.Contains(out, `"path": "steps[0].outcome.status"`) {
		t.Errorf("diff --json: exit %d\n%s", code, out)
	}
	if code, _, _ = run(t, "diff", a, a); code != ExitOK {
		t.Errorf("identical files differ")
	}
	os.WriteFile(b, []byte(mustReplace(t, string(data), `"status": "ENV_ERROR"`, `"status": "BROKEN"`)), 0o644)
	code, out, _ = run(t, "validate", a, b, "../../scenarios/outcome.env-error.yaml")
	if code != ExitFail || !strings.Contains(out, "/steps/0/outcome/status: value must be one of") || !strings.Contains(out, "1 of 3 files invalid") {
		t.Errorf("validate: exit %d\n%s", code, out)
	}
}

func TestListAndCoverage(t *testing.T) {
	t.Parallel()
	code, out, _ := run(t, "list", "--run", "resume.*")
	if code != ExitOK || !strings.Contains(out, "resume.safe-replayed") || strings.Contains(out, "outcome.") {
		t.Errorf("list: exit %d\n%s", code, out)
	}
	code, out, _ = run(t, "list", "--format", "json")
	if code != ExitOK || !strings.Contains(out, `"id": "outcome.env-error"`) {
		t.Errorf("list --format json: exit %d", code)
	}
	if _, alias, _ := run(t, "list", "--json"); alias != out {
		t.Error("list --json, the alias, prints something else than --format json")
	}
	code, out, _ = run(t, "coverage", "--format", "markdown")
	if code != ExitOK || !strings.Contains(out, "| `0008.D4.env-error` | MUST | accepted |") {
		t.Errorf("coverage: exit %d\n%s", code, out)
	}
	// A design folder with an uncovered MUST decision fails coverage.
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "9999-x.md"), []byte("### 9999.D1 — Nobody checks this\n- level: MUST\n- status: accepted\n"), 0o644)
	code, out, _ = run(t, "coverage", "--design", dir)
	if code != ExitFail || !strings.Contains(out, "MUST decision 9999.D1 has no scenario") || !strings.Contains(out, "cites 0008.D2, which no record") ||
		!strings.Contains(out, "MUST decision 9999.D1 has no deviation in reference/deviation") {
		t.Errorf("coverage with foreign records: exit %d\n%s", code, out)
	}
}

func TestRecordThenVerify(t *testing.T) {
	t.Parallel()
	exe := selfImpl(t)
	dir := t.TempDir()
	code, out, errs := run(t, "run", "--impl", exe+" serve-reference", "--run", "resume.*,context.order", "--record", dir)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) < 10 {
		t.Fatalf("recorded %d trajectories", len(files))
	}
	code, out, _ = run(t, "verify", dir)
	if code != ExitOK || !strings.Contains(out, " passed, 0 failed") {
		t.Errorf("verify of a recording: exit %d\n%s", code, out)
	}
}

// TestProtocolExamples keeps docs/examples honest: each committed
// transcript must be what the runner and serve-reference exchange today.
func TestProtocolExamples(t *testing.T) {
	t.Parallel()
	exe := selfImpl(t)
	examples, _ := filepath.Glob("../../docs/examples/*.jsonl")
	if len(examples) == 0 {
		t.Fatal("no examples in docs/examples")
	}
	for _, ex := range examples {
		id := strings.TrimSuffix(filepath.Base(ex), ".jsonl")
		dir := t.TempDir()
		if code, out, errs := run(t, "run", "--impl", exe+" serve-reference", "--run", id, "--transcripts", dir); code != ExitOK {
			t.Fatalf("%s: exit %d\n%s\n%s", id, code, out, errs)
		}
		want, _ := os.ReadFile(ex)
		got, _ := os.ReadFile(filepath.Join(dir, id+".jsonl"))
		if string(got) != string(want) {
			t.Errorf("%s: transcript differs from docs/examples/%s.jsonl; regenerate it with run --transcripts and review the change", id, id)
		}
	}
}

// TestVerify_implementationText: a recorded migration that words the
// executor's sentence its own way verifies; --strict names the field; a
// stack trace in the sentence fails even by default.
func TestVerify_implementationText(t *testing.T) {
	dir := t.TempDir()
	const theirs = `"observation": "unknown tool 'read_fiel' (visible: read_file)"`
	copyGolden(t, dir, "validation.unknown-tool", func(s string) string {
		return mustReplace(t, s, `"observation": "tool \"read_fiel\" does not exist"`, theirs)
	})
	if code, out, _ := run(t, "verify", dir); code != ExitOK {
		t.Fatalf("own wording: exit %d\n%s", code, out)
	}
	code, out, _ := run(t, "verify", "--strict", dir)
	if code != ExitFail || !strings.Contains(out, "steps[0].outcome.observation: want ") {
		t.Fatalf("--strict: exit %d\n%s", code, out)
	}
	trace := t.TempDir()
	copyGolden(t, trace, "validation.unknown-tool", func(s string) string {
		return mustReplace(t, s, `"observation": "tool \"read_fiel\" does not exist"`, `"observation": "Traceback (most recent call last):\n  File \"kernel.py\", line 9, in run"`)
	})
	code, out, _ = run(t, "verify", trace)
	if code != ExitFail || !strings.Contains(out, "must not carry a stack trace") {
		t.Fatalf("stack trace: exit %d\n%s", code, out)
	}
	code, out, _ = run(t, "diff", filepath.Join("../../trajectories", "validation.unknown-tool.json"), filepath.Join(dir, "validation.unknown-tool.json"))
	if code != ExitOK || !strings.Contains(out, "0 differences") {
		t.Fatalf("diff: exit %d\n%s", code, out)
	}
}

// TestEveryMessageMatchesTheSchema runs the whole suite over the protocol
// and validates every message both sides sent against
// docs/protocol.schema.json, so the schema describes what the runner sends
// as well as what it accepts.
func TestEveryMessageMatchesTheSchema(t *testing.T) {
	t.Parallel()
	exe := selfImpl(t)
	dir := t.TempDir()
	if code, out, errs := run(t, "run", "--impl", exe+" serve-reference", "-p", "2", "--transcripts", dir); code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if len(files) < 80 {
		t.Fatalf("%d transcripts", len(files))
	}
	n := 0
	for _, f := range files {
		data, _ := os.ReadFile(f)
		for i, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			var entry struct {
				From    string          `json:"from"`
				Message json.RawMessage `json:"message"`
			}
			if err := json.Unmarshal([]byte(line), &entry); err != nil {
				t.Fatalf("%s:%d: %v", f, i+1, err)
			}
			if _, err := protocol.Decode(entry.Message); err != nil {
				t.Errorf("%s:%d (%s): %v", filepath.Base(f), i+1, entry.From, err)
			}
			n++
		}
	}
	t.Logf("%d messages in %d transcripts match the schema", n, len(files))
}

// TestIgnorePatternsAreChecked: a pattern that matches no field of the
// format is refused, so is hiding what a MUST expect block checks unless
// --ignore-must says so, and verify says what it left out.
func TestIgnorePatternsAreChecked(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	copyGolden(t, dir, "context.order", same)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"verify", "--ignore", "step[*].context_size", dir}, ExitSetup, `--ignore "step[*].context_size" matches no field`},
		{[]string{"verify", "--ignore", "events**", dir}, ExitSetup, `--ignore "events**" matches no field`},
		{[]string{"verify", "--ignore", "steps", dir}, ExitSetup, "which that MUST scenario's expect block checks"},
		{[]string{"verify", "--ignore", "steps[*].model_input", dir}, ExitSetup, "which that MUST scenario's expect block checks"},
		{[]string{"verify", "--ignore", "steps", "--ignore-must", dir}, ExitOK, "ignored 78 fields matching steps"},
		{[]string{"verify", "--ignore", "steps[*].context_size", dir}, ExitOK, "ignored 3 fields matching steps[*].context_size"},
		{[]string{"diff", "--ignore", "nope", dir + "/context.order.json", dir + "/context.order.json"}, ExitSetup, `--ignore "nope" matches no field`},
	} {
		code, out, errs := run(t, tc.args...)
		if code != tc.code || !strings.Contains(out+errs, tc.want) {
			t.Errorf("%v: exit %d, want %d and %q\n%s%s", tc.args, code, tc.code, tc.want, out, errs)
		}
	}
}
