package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
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
	const sel = "outcome.env-error,context.order"
	code, out, _ := run(t, "verify", "--run", sel, dir)
	if code != ExitFail || !strings.Contains(out, "steps[0].context_size: want 81, got 85") || !strings.Contains(out, "1 passed, 1 failed") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	code, out, _ = run(t, "verify", "--run", sel, "--ignore", "steps[*].context_size", dir)
	if code != ExitOK {
		t.Errorf("with --ignore: exit %d\n%s", code, out)
	}
	ign := filepath.Join(t.TempDir(), "ignore.txt")
	os.WriteFile(ign, []byte("# our tokenizer differs\nsteps[*].context_size\n"), 0o644)
	if code, out, _ = run(t, "verify", "--run", sel, "--ignore-file", ign, dir); code != ExitOK {
		t.Errorf("with --ignore-file: exit %d\n%s", code, out)
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`{"format":"polyloop.trajectory/v1","scenario":"x.y"}`), 0o644)
	code, out, _ = run(t, "verify", "--run", "outcome.env-error", bad)
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
		!strings.Contains(out, "MUST decision 9999.D1 has no deviation in internal/deviation") {
		t.Errorf("coverage with foreign records: exit %d\n%s", code, out)
	}
}

func TestRecordThenVerify(t *testing.T) {
	t.Parallel()
	exe := selfImpl(t)
	dir := t.TempDir()
	// --timeout 60s: on a loaded machine a resume scenario's two
	// processes can pass the default 10 s; what is checked is the recording.
	// Every resume scenario under POLYLOOP_LONG=1, otherwise one of each
	// kind (SAFE, NEVER, torn tail, two phases).
	sel, want := "resume.*,context.order", 10
	if !long() {
		sel, want = "resume.safe-replayed,resume.never-not-replayed,resume.torn-tail,resume.crash-in-second-phase,context.order", 5
	}
	code, out, errs := run(t, "run", "--impl", exe+" serve-reference", "--timeout", "60s", "--run", sel, "--record", dir)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) < want {
		t.Fatalf("recorded %d trajectories", len(files))
	}
	code, out, _ = run(t, "verify", "--run", sel, dir)
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
	// Most examples show the protocol without its options; the ones named
	// here show the runner playing a fault (wire-sink, wire-measure).
	withOptions := map[string]bool{"context.unknown-block-before-model-call": true, "events.sink-failure-continues": true}
	for _, ex := range examples {
		id := strings.TrimSuffix(filepath.Base(ex), ".jsonl")
		dir := t.TempDir()
		impl := exe + " serve-reference --plain"
		if withOptions[id] {
			impl = exe + " serve-reference"
		}
		if code, out, errs := run(t, "run", "--impl", impl, "--run", id, "--transcripts", dir); code != ExitOK {
			t.Fatalf("%s: exit %d\n%s\n%s", id, code, out, errs)
		}
		want, _ := os.ReadFile(ex)
		got, _ := os.ReadFile(filepath.Join(dir, id+".jsonl"))
		// Run IDs are random on every run (opaque to the implementation).
		runID := regexp.MustCompile(`run\.[0-9a-f]{16}`)
		want, got = runID.ReplaceAll(want, []byte("run.ID")), runID.ReplaceAll(got, []byte("run.ID"))
		// So are the weights of the runner's measure (wire-measure): its
		// sizes, and the context sizes summed from them, differ per runner.
		size := regexp.MustCompile(`"(context_size|size)":[0-9]+`)
		want, got = size.ReplaceAll(want, []byte(`"$1":N`)), size.ReplaceAll(got, []byte(`"$1":N`))
		if !bytes.Contains(got, []byte(`"id":"run.ID"`)) {
			t.Errorf("%s: the run message carries no opaque run ID", id)
		}
		if bytes.Contains(got, []byte(`"`+id+`"`)) {
			t.Errorf("%s: the scenario's ID reached the wire", id)
		}
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
	if code, out, _ := run(t, "verify", "--run", "validation.unknown-tool", dir); code != ExitOK {
		t.Fatalf("own wording: exit %d\n%s", code, out)
	}
	code, out, _ := run(t, "verify", "--run", "validation.unknown-tool", "--strict", dir)
	if code != ExitFail || !strings.Contains(out, "steps[0].outcome.observation: want ") {
		t.Fatalf("--strict: exit %d\n%s", code, out)
	}
	trace := t.TempDir()
	copyGolden(t, trace, "validation.unknown-tool", func(s string) string {
		return mustReplace(t, s, `"observation": "tool \"read_fiel\" does not exist"`, `"observation": "Traceback (most recent call last):\n  File \"kernel.py\", line 9, in run"`)
	})
	code, out, _ = run(t, "verify", "--run", "validation.unknown-tool", trace)
	if code != ExitFail || !strings.Contains(out, "must not carry a stack trace") {
		t.Fatalf("stack trace: exit %d\n%s", code, out)
	}
	code, out, _ = run(t, "diff", filepath.Join("../../trajectories", "validation.unknown-tool.json"), filepath.Join(dir, "validation.unknown-tool.json"))
	if code != ExitOK || !strings.Contains(out, "0 differences") {
		t.Fatalf("diff: exit %d\n%s", code, out)
	}
}

// TestEveryMessageMatchesTheSchema runs the whole suite over the protocol
// (under POLYLOOP_LONG=1; otherwise one scenario of each family) and validates every message both sides sent against
// docs/protocol.schema.json, so the schema describes what the runner sends
// as well as what it accepts.
func TestEveryMessageMatchesTheSchema(t *testing.T) {
	t.Parallel()
	exe := selfImpl(t)
	dir := t.TempDir()
	// The suite over the protocol: it must pass, and every message either
	// side wrote must match the schema.
	args := append([]string{"run", "--impl", exe + " serve-reference", "-p", "2", "--transcripts", dir}, suiteSlice(t)...)
	if code, out, errs := runBuilt(t, args...); code != ExitOK || !strings.Contains(out, " 0 failed, 0 skipped") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	want := len(familyFirsts(t))
	if long() {
		want = 80
	}
	if len(files) < want {
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
		{[]string{"verify", "--run", "context.order", "--ignore", "steps", "--ignore-must", dir}, ExitOK, "ignored 78 fields matching steps"},
		{[]string{"verify", "--run", "context.order", "--ignore", "steps[*].context_size", dir}, ExitOK, "ignored 3 fields matching steps[*].context_size"},
		{[]string{"diff", "--ignore", "nope", dir + "/context.order.json", dir + "/context.order.json"}, ExitSetup, `--ignore "nope" matches no field`},
	} {
		code, out, errs := run(t, tc.args...)
		if code != tc.code || !strings.Contains(out+errs, tc.want) {
			t.Errorf("%v: exit %d, want %d and %q\n%s%s", tc.args, code, tc.code, tc.want, out, errs)
		}
	}
}

// TestVerify_checksWhatRunChecks: verify passed a trajectory filed under
// another scenario's name, a directory holding 2 of the suite's files, a
// stale file a recording did not write, and a golden-equal trajectory the
// scenario's expect contradicts. Each now fails with a sentence.
func TestVerify_checksWhatRunChecks(t *testing.T) {
	t.Parallel()
	misnamed := t.TempDir()
	data, _ := os.ReadFile(filepath.Join("../../trajectories", "outcome.normal-return.json"))
	os.WriteFile(filepath.Join(misnamed, "outcome.env-error.json"), data, 0o644)
	code, out, _ := run(t, "verify", "--run", "outcome.env-error", misnamed)
	if code != ExitFail || !strings.Contains(out, `the file is named for outcome.env-error but holds the trajectory of "outcome.normal-return"`) {
		t.Errorf("misnamed: exit %d\n%s", code, out)
	}

	two := t.TempDir()
	copyGolden(t, two, "outcome.env-error", same)
	copyGolden(t, two, "context.order", same)
	code, out, _ = run(t, "verify", two)
	if code != ExitFail || !strings.Contains(out, "FAIL outcome.normal-return\n  missing: no trajectory") || !strings.Contains(out, "2 passed, ") {
		t.Errorf("2 of the suite: exit %d\n%s", code, out)
	}

	rec := t.TempDir()
	if code, out, errs := run(t, "run", "--run", "outcome.*", "--record", rec); code != ExitOK {
		t.Fatalf("record: exit %d\n%s\n%s", code, out, errs)
	}
	copyGolden(t, rec, "context.order", same) // left by an earlier run
	code, out, _ = run(t, "verify", "--run", "outcome.*,context.order", rec)
	if code != ExitFail || !strings.Contains(out, "stale: the recording of") {
		t.Errorf("stale: exit %d\n%s", code, out)
	}
	if code, out, _ = run(t, "verify", "--run", "outcome.*", rec); code != ExitOK || !strings.Contains(out, "skip ") {
		t.Errorf("the recording's own selection: exit %d\n%s", code, out)
	}

	// A golden edited to contradict the design is caught by expect.
	scen, gold := t.TempDir(), t.TempDir()
	src, _ := os.ReadFile("../../scenarios/outcome.env-error.yaml")
	os.WriteFile(filepath.Join(scen, "outcome.env-error.yaml"), src, 0o644)
	edit := func(s string) string { return mustReplace(t, s, `"status": "ENV_ERROR"`, `"status": "EXECUTED"`) }
	copyGolden(t, gold, "outcome.env-error", edit)
	got := t.TempDir()
	copyGolden(t, got, "outcome.env-error", edit)
	code, out, _ = run(t, "verify", "--scenarios", scen, "--goldens", gold, got)
	if code != ExitFail || !strings.Contains(out, "1 from the scenario's expect") || !strings.Contains(out, "expect: ") {
		t.Errorf("expect: exit %d\n%s", code, out)
	}
}
