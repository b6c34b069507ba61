package gate

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/polyloop/polyloop-conform/internal/decisions"
	"github.com/polyloop/polyloop-conform/internal/engine"
	"github.com/polyloop/polyloop-conform/internal/golden"
	"github.com/polyloop/polyloop-conform/internal/refdriver"
	"github.com/polyloop/polyloop-conform/internal/upstream"
	"github.com/polyloop/polyloop-conform/scenarios"
	"github.com/polyloop/polyloop-conform/trajectories"
)

const records = `# test records

### 0008.D4.normal-return — A normal return is EXECUTED
- level: MUST
- status: accepted

The returned text.

### 0008.D4.constants — Constants
- level: MUST
- status: accepted

### 0004.D1 — Two counters
- level: MUST
- status: accepted
- upstream: 0042 决策一

### 0008.D4.validate — Validation
- level: MUST
- status: accepted

### 0003.D4 — Validation first
- level: MUST
- status: accepted
- upstream: 0042 决策二
`

// repo builds a small git repository with two scenarios, their goldens and
// the records they cite, committed as the base.
func repo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{ScenarioDir, GoldenDir, DesignDir} {
		os.MkdirAll(filepath.Join(dir, d), 0o755)
	}
	for _, id := range []string{"outcome.normal-return", "validation.unknown-tool"} {
		data, err := os.ReadFile(filepath.Join("../../scenarios", id+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		write(t, dir, ScenarioDir+"/"+id+".yaml", string(data))
	}
	write(t, dir, DesignDir+"/0099-test.md", records)
	regenerateGoldens(t, dir)
	run(t, dir, "git", "init", "-q")
	commit(t, dir, "base")
	return dir
}

func write(t *testing.T, dir, rel, body string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, rel), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func edit(t *testing.T, dir, rel, old, new string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, rel))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), old) {
		t.Fatalf("%s does not contain %q", rel, old)
	}
	write(t, dir, rel, strings.Replace(string(data), old, new, 1))
}

func run(t *testing.T, dir string, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.org", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.org")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
}

func commit(t *testing.T, dir, msg string) {
	run(t, dir, "git", "add", "-A")
	run(t, dir, "git", "commit", "-q", "-m", msg)
}

// regenerateGoldens writes the reference's trajectories, as the update flag would.
func regenerateGoldens(t *testing.T, dir string) {
	t.Helper()
	scs, err := scenarios.LoadAll(os.DirFS(filepath.Join(dir, ScenarioDir)))
	if err != nil {
		t.Fatal(err)
	}
	suite := &engine.Suite{Scenarios: scs}
	for _, sc := range scs {
		res := suite.Run(context.Background(), refdriver.Driver{}, sc)
		if !res.Passed() {
			t.Fatalf("%s: %v %s", sc.ID, res.Messages(), res.Skipped)
		}
		if _, err := golden.Write(filepath.Join(dir, GoldenDir), res.Trajectory, true); err != nil {
			t.Fatal(err)
		}
	}
}

func gateProblems(t *testing.T, o Options) string {
	t.Helper()
	res, err := Check(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(res.Problems, "\n")
}

func TestGate_cleanTreePasses(t *testing.T) {
	dir := repo(t)
	if p := gateProblems(t, Options{Dir: dir, Base: "HEAD"}); p != "" {
		t.Errorf("problems on an unchanged tree:\n%s", p)
	}
}

func TestGate_goldenChangeNeedsDecisionChange(t *testing.T) {
	dir := repo(t)
	// The behaviour changes (the scenario asks for another file) and the
	// golden is regenerated, but no decision says why.
	edit(t, dir, ScenarioDir+"/outcome.normal-return.yaml", `"path": "notes.txt"`, `"path": "todo.txt"`)
	regenerateGoldens(t, dir)
	p := gateProblems(t, Options{Dir: dir, Base: "HEAD"})
	want := "golden outcome.normal-return changed but none of its decisions (0008.D4.normal-return, 0008.D4.constants, 0004.D1) changed"
	if !strings.Contains(p, want) {
		t.Fatalf("want %q in:\n%s", want, p)
	}
	// Now the decision's text changes in the same range: the gate passes.
	edit(t, dir, DesignDir+"/0099-test.md", "The returned text.", "The returned text, verbatim.")
	if p := gateProblems(t, Options{Dir: dir, Base: "HEAD"}); p != "" {
		t.Errorf("explained change still refused:\n%s", p)
	}
	// Committed, the same range still passes against the old base.
	commit(t, dir, "explained change")
	if p := gateProblems(t, Options{Dir: dir, Base: "HEAD~1"}); p != "" {
		t.Errorf("committed range refused:\n%s", p)
	}
}

func TestGate_formatChangeExplainsGoldens(t *testing.T) {
	dir := repo(t)
	edit(t, dir, ScenarioDir+"/outcome.normal-return.yaml", `"path": "notes.txt"`, `"path": "todo.txt"`)
	regenerateGoldens(t, dir)
	// The same golden change, with the trajectory schema changed in the range.
	write(t, dir, GoldenDir+"/"+trajectories.SchemaFile, `{"description": "format v1.1"}`)
	res, err := Check(context.Background(), Options{Dir: dir, Base: "HEAD"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Problems) > 0 || !strings.Contains(strings.Join(res.Notes, "\n"), "1 goldens changed with trajectories/trajectory.schema.json") {
		t.Errorf("problems %v, notes %v", res.Problems, res.Notes)
	}
}

func TestGate_staleAndMissingGoldens(t *testing.T) {
	dir := repo(t)
	edit(t, dir, GoldenDir+"/validation.unknown-tool.json", `"model_calls": 1`, `"model_calls": 2`)
	p := gateProblems(t, Options{Dir: dir, Base: "HEAD"})
	for _, want := range []string{
		"golden trajectories/validation.unknown-tool.json is stale: the reference now produces model_calls: want 2, got 1",
		"golden validation.unknown-tool changed but none of its decisions",
	} {
		if !strings.Contains(p, want) {
			t.Errorf("want %q in:\n%s", want, p)
		}
	}
	os.Remove(filepath.Join(dir, GoldenDir, "validation.unknown-tool.json"))
	write(t, dir, GoldenDir+"/orphan.scenario.json", "{}")
	p = gateProblems(t, Options{Dir: dir})
	for _, want := range []string{"scenario validation.unknown-tool has no golden", "golden trajectories/orphan.scenario.json has no scenario"} {
		if !strings.Contains(p, want) {
			t.Errorf("want %q in:\n%s", want, p)
		}
	}
}

func TestGate_changedDecisionNeedsAScenario(t *testing.T) {
	dir := repo(t)
	edit(t, dir, DesignDir+"/0099-test.md", "### 0003.D4", "### 0008.D9 — A new rule nobody checks\n- level: MUST\n- status: accepted\n\n### 0003.D4")
	p := gateProblems(t, Options{Dir: dir, Base: "HEAD"})
	if !strings.Contains(p, "decision 0008.D9 changed but no scenario cites it") {
		t.Errorf("new uncited decision not refused:\n%s", p)
	}
	// A MUST decision turned into its opposite, with its scenarios and
	// goldens untouched, passed: they pass as they stand, but they were
	// written for the old text.
	dir = repo(t)
	edit(t, dir, DesignDir+"/0099-test.md", "### 0003.D4 — Validation first", "### 0003.D4 — Validation never happens first")
	p = gateProblems(t, Options{Dir: dir, Base: "HEAD"})
	if !strings.Contains(p, "MUST decision 0003.D4 changed but none of the scenarios citing it (validation.unknown-tool) nor their goldens changed") {
		t.Errorf("a flipped MUST decision passed the gate:\n%s", p)
	}
	// Recording the review in the record lets it through.
	dir = repo(t)
	edit(t, dir, DesignDir+"/0099-test.md", "- upstream: 0042 决策二\n", "- upstream: 0042 决策二\n- reviewed: 2026-12-03, validation.unknown-tool still checks it\n\nValidation happens before any executor.\n")
	res, err := Check(context.Background(), Options{Dir: dir, Base: "HEAD"})
	if err != nil || len(res.Problems) > 0 {
		t.Fatalf("%v %v", res.Problems, err)
	}
	if !strings.Contains(strings.Join(res.Notes, "\n"), "decision 0003.D4 changed; checked by validation.unknown-tool") {
		t.Errorf("notes = %v", res.Notes)
	}
}

func TestGate_badBase(t *testing.T) {
	dir := repo(t)
	if _, err := Check(context.Background(), Options{Dir: dir, Base: "no-such-rev"}); err == nil {
		t.Error("a bad base was accepted")
	}
}

func TestUpstreamPinAndGate(t *testing.T) {
	dir := repo(t)
	set, err := decisions.Load(os.DirFS(filepath.Join(dir, DesignDir)))
	if err != nil {
		t.Fatal(err)
	}
	v1, err := upstream.ReadDir("testdata/upstream/v1")
	if err != nil {
		t.Fatal(err)
	}
	if len(v1) != 2 || v1[0].Key() != "0042 决策一" || v1[1].Key() != "0042 决策二" {
		t.Fatalf("split into %+v", v1)
	}
	lock, unmapped := upstream.Pin(v1, set)
	if len(unmapped) != 0 || lock.Decisions[1].Local[0] != "0003.D4" {
		t.Fatalf("pin: %+v unmapped %v", lock, unmapped)
	}
	lockPath := filepath.Join(dir, LockFile)
	if err := upstream.WriteLock(lockPath, lock); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ dir, want string }{
		{"v1", ""},
		{"reflow", ""},
		{"v2", "upstream 0042 决策二 changed: revisit 0003.D4, scenarios validation.unknown-tool"},
		{"v3", "upstream 0042 决策三 (0042-example.md:21) is new and maps to no local decision"},
	} {
		p := gateProblems(t, Options{Dir: dir, Upstream: "testdata/upstream/" + tc.dir})
		if tc.want == "" && p != "" {
			t.Errorf("%s: unexpected problems:\n%s", tc.dir, p)
		}
		if tc.want != "" && !strings.Contains(p, tc.want) {
			t.Errorf("%s: want %q in:\n%s", tc.dir, tc.want, p)
		}
	}
}

func TestRevisit(t *testing.T) {
	if got := revisit([]string{"0008.D4", "0008.D4.env-error", "0008.D4.validate"}); got != "0008.D4.* (0008.D4, 0008.D4.env-error, 0008.D4.validate)" {
		t.Errorf("revisit = %q", got)
	}
	if got := revisit([]string{"0008.D1"}); got != "0008.D1" {
		t.Errorf("revisit = %q", got)
	}
}

// TestGate_wordingChangeNeedsNoDecision: a golden that changed only in
// implementation text (the reference reworded its executor sentence) needs
// no decision change; a normative change beside it still does.
func TestGate_wordingChangeNeedsNoDecision(t *testing.T) {
	dir := repo(t)
	rel := GoldenDir + "/validation.unknown-tool.json"
	edit(t, dir, rel, `"observation": "tool \"read_fiel\" does not exist"`, `"observation": "no tool is called read_fiel"`)
	res, err := Check(context.Background(), Options{Dir: dir, Base: "HEAD"})
	if err != nil {
		t.Fatal(err)
	}
	problems, notes := strings.Join(res.Problems, "\n"), strings.Join(res.Notes, "\n")
	if strings.Contains(problems, "golden validation.unknown-tool changed but none of its decisions") {
		t.Errorf("a wording change was asked for a decision:\n%s", problems)
	}
	if !strings.Contains(notes, "golden validation.unknown-tool changed only in implementation text") {
		t.Errorf("no wording note:\n%s", notes)
	}
	// The reference still writes the old words, so the golden is stale:
	// goldens stay byte-exact records of the reference.
	if !strings.Contains(problems, "golden trajectories/validation.unknown-tool.json is stale") {
		t.Errorf("stale golden not reported:\n%s", problems)
	}
	edit(t, dir, rel, `"status": "NOT_EXECUTED"`, `"status": "EXECUTED"`)
	if p := gateProblems(t, Options{Dir: dir, Base: "HEAD"}); !strings.Contains(p, "golden validation.unknown-tool changed but none of its decisions") {
		t.Errorf("a normative change passed as wording:\n%s", p)
	}
}
