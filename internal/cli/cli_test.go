package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain lets the test binary act as `polyloop-conform` itself, so the
// end-to-end tests start a real serve-reference subprocess, and the
// scripts in testdata/script (testscript) run `polyloop-conform` commands
// in process through the same binary.
func TestMain(m *testing.M) {
	if os.Getenv("POLYLOOP_TEST_SERVE") == "1" {
		os.Exit(Exec(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	testscript.Main(withSetup{m}, map[string]func(){
		"polyloop-conform": func() { os.Exit(Exec(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
	})
}

// withSetup runs the tests with what they share, when the test binary is
// not standing in for a command.
type withSetup struct{ m *testing.M }

func (w withSetup) Run() int {
	// The implementations the tests start (serve-reference, and the
	// scripts in testdata/impls through $POLYLOOP_REF) are the CLI
	// without the race detector: they are the implementation under test,
	// started hundreds of times, and a race-instrumented child costs
	// several times as much to start. The code they run is race-tested in
	// process here and in internal/protocol. Without -race this test
	// binary is that CLI (POLYLOOP_TEST_SERVE=1, TestMain), and no link is
	// spent before the first test; under -race the CLI is built once.
	if !raceOn {
		self, err := os.Executable()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		ref = self
		os.Setenv("POLYLOOP_TEST_SERVE", "1")
	} else {
		dir, err := os.MkdirTemp("", "polyloop-cli-test-*")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		defer os.RemoveAll(dir)
		ref = filepath.Join(dir, "polyloop-conform")
		if out, err := exec.Command("go", "build", "-o", ref, "../../cmd/polyloop-conform").CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "build polyloop-conform for the subprocess tests: %v\n%s", err, out)
			return 2
		}
	}
	os.Setenv("POLYLOOP_REF", ref)
	// Most of these tests wait on implementation processes, not on the
	// CPU: run more of them at once than go test's default -parallel
	// (GOMAXPROCS), unless -parallel was given.
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		flag.Set("test.parallel", strconv.Itoa(max(6, 3*runtime.GOMAXPROCS(0))))
	}
	return w.m.Run()
}

// TestScripts runs the end-to-end scripts in testdata/script: commands as
// a user types them (the README's, mostly), with what they must print.
func TestScripts(t *testing.T) {
	t.Parallel()
	testdata, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{Dir: filepath.Join("testdata", "script"), Setup: func(env *testscript.Env) error {
		// The implementations in testdata, and the built CLI they start.
		env.Setenv("TESTDATA", testdata)
		env.Setenv("POLYLOOP_REF", ref)
		if v := os.Getenv("POLYLOOP_TEST_SERVE"); v != "" { // ref is this test binary
			env.Setenv("POLYLOOP_TEST_SERVE", v)
		}
		return nil
	}})
}

// ref is the CLI binary the subprocess tests start.
var ref string

func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(context.Background(), args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// runBuilt is run through the CLI binary built without the race
// detector, for the tests whose point is a whole run's output (a report,
// a transcript of every scenario), not the runner's concurrency: a whole
// suite in a race-instrumented runner costs several times the CPU, and
// the runner's own code is race-tested by the tests that call run.
func runBuilt(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return runBuiltEnv(t, nil, args...)
}

// runBuiltEnv is runBuilt with env (VAR=value) added to the CLI's
// environment: a parallel test's way to set what the runner reads from
// its environment, which t.Setenv allows only in a test that runs alone.
func runBuiltEnv(t *testing.T, env []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(ref, args...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s %v: %v", ref, args, err)
	}
	return code, out.String(), errb.String()
}

// scenarioDir is a new directory holding copies of the suite's scenarios
// ids, for --scenarios: a small suite for a test about something else.
func scenarioDir(t *testing.T, ids ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, id := range ids {
		data, err := os.ReadFile("../../scenarios/" + id + ".yaml")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, id+".yaml"), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// selfImpl returns the CLI binary that serves as an implementation over
// the protocol (also $POLYLOOP_REF for the scripts in testdata/impls).
func selfImpl(t *testing.T) string {
	t.Helper()
	return ref
}

// TestRun_inProcess_allPass: the README's first command, the whole suite
// against the built-in reference, passes. Through the build without the
// race detector: the point is the whole run's verdict; the kernel's and
// the runner's concurrency are race-tested in process by the conformance
// suite and by the tests here that call run.
func TestRun_inProcess_allPass(t *testing.T) {
	t.Parallel()
	code, out, errs := runBuilt(t, "run")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(out, " passed, 0 failed, 0 skipped") {
		t.Errorf("summary missing:\n%s", out)
	}
}

// TestRun_serveReferenceSubprocess_allPass: a sample of the suite over
// the protocol passes against serve-reference with one process and with
// three (a smaller one without POLYLOOP_LONG=1; TestEveryMessageMatchesTheSchema
// runs the whole suite over the protocol; CI runs it whole both ways).
func TestRun_serveReferenceSubprocess_allPass(t *testing.T) {
	t.Parallel()
	exe := selfImpl(t)
	runs, least := []struct{ p, run string }{{"1", "resume.*,cancel.*"}, {"3", "govdoc.*,parse.*,context.*"}}, 25
	if !long() { // a few of each family
		runs, least = []struct{ p, run string }{{"1", "resume.safe-*,resume.never-*,cancel.during-*"}, {"3", "govdoc.real-*-refused,parse.fenced-*,context.order"}}, 3
	}
	for _, c := range runs {
		p := c.p
		runner := run // the runner's concurrency with three processes, race-checked
		if p == "1" {
			runner = runBuilt
		}
		code, out, errs := runner(t, "run", "--impl", exe+" serve-reference", "-p", p, "--report", "json", "--run", c.run)
		if code != ExitOK {
			t.Fatalf("-p %s: exit %d\n%s\n%s", p, code, out, errs)
		}
		var rep struct {
			Implementation string
			Counts         struct{ Passed, Failed, Skipped int }
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatal(err)
		}
		if rep.Counts.Failed != 0 || rep.Counts.Skipped != 0 || rep.Counts.Passed < least {
			t.Errorf("-p %s: counts %+v", p, rep.Counts)
		}
		if !strings.Contains(rep.Implementation, "over the stdio protocol") {
			t.Errorf("implementation name %q", rep.Implementation)
		}
	}
}

func TestRun_brokenImplementations(t *testing.T) {
	// Not parallel: it counts the process's goroutines before and after.
	selfImpl(t)
	// Only hang.sh is meant to hit the timeout; the others get room to be
	// slow under the race detector (flood.sh pipes 20 MB).
	cases := []struct {
		script string
		want   string
	}{
		{"hang.sh", "timed out after 1s"},
		{"crash.sh", "closed its stdout (exit status 3)"},
		{"garbage.sh", "not a JSON object"},
		{"partial.sh", "bad protocol message"},
		{"unknown.sh", `unexpected message type "banana"`},
		{"flood.sh", "longer than"},
		{"exit-mid-run.sh", "closed its stdout"},
		{"drop-key.sh", "at /trajectory/steps/0: missing property 'replayed'"},
		{"misspelled-key.sh", "at /trajectory/steps/0/outcome: additional properties 'observation_synthetic' not allowed"},
		{"no-phase.sh", "at /: missing property 'phase'"},
	}
	before := runtime.NumGoroutine()
	for _, tc := range cases {
		t.Run(tc.script, func(t *testing.T) {
			impl := "sh " + filepath.Join("testdata", "impls", tc.script)
			timeout := "20s"
			if tc.script == "hang.sh" {
				timeout = "1s"
			}
			code, out, errs := run(t, "run", "--impl", impl, "--run", "outcome.normal-return,validation.unknown-tool", "--timeout", timeout)
			if code != ExitFail {
				t.Fatalf("exit %d, want %d (scenarios failed)\n%s\n%s", code, ExitFail, out, errs)
			}
			if !strings.Contains(out, tc.want) {
				t.Errorf("report lacks %q:\n%s", tc.want, out)
			}
			// Both scenarios ran: the runner went on after the first failure.
			if !strings.Contains(out, "0 passed, 2 failed") {
				t.Errorf("want both scenarios failed:\n%s", out)
			}
		})
	}
	if leaked := leftoverSleeps(); len(leaked) > 0 {
		t.Errorf("processes left behind by killed implementations: %v", leaked)
	}
	deadline := time.Now().Add(3 * time.Second)
	for runtime.NumGoroutine() > before+2 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before+2 {
		buf := make([]byte, 1<<16)
		t.Errorf("goroutines: %d before, %d after\n%s", before, n, buf[:runtime.Stack(buf, true)])
	}
}

// leftoverSleeps finds the marker sleeps the broken scripts start.
func leftoverSleeps() []string {
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		cmd, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(cmd, []byte("1000.424")) {
			out = append(out, e.Name()+":"+strings.ReplaceAll(string(cmd), "\x00", " "))
		}
	}
	return out
}

func TestRun_wrongFieldNamesPathAndDecision(t *testing.T) {
	t.Parallel()
	selfImpl(t)
	code, out, _ := run(t, "run", "--impl", "sh testdata/impls/wrong-field.sh", "--run", "completion.by-tool")
	if code != ExitFail {
		t.Fatalf("exit %d\n%s", code, out)
	}
	// One line for both oracles, the cause naming the decision that
	// governs the field, and the scenario's own decisions in its header.
	for _, want := range []string{
		"end.reason differs in 1 scenario — 0004.D2; first: completion.by-tool",
		"FAIL completion.by-tool  [0004.D3 0006.D5 0008.D4.constants 0008.D3]",
		"  end.reason: want goal_reached_by_tool, got goal_reached_by_environment (expect and golden)",
		"rerun: polyloop-conform run --impl 'sh testdata/impls/wrong-field.sh' --run 'completion.by-tool' --trace",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	// The JSON report carries the same mismatch as data.
	code, out, _ = run(t, "run", "--impl", "sh testdata/impls/wrong-field.sh", "--run", "completion.by-tool", "--report", "json")
	var rep struct {
		Format    string
		Scenarios []struct {
			Problems []struct {
				Source, Path string
				Want, Got    any
				Decisions    []string
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != ExitFail || len(rep.Scenarios) != 1 || rep.Format != "polyloop.report/v1" {
		t.Fatalf("json report: exit %d, %v", code, err)
	}
	found := false
	for _, d := range rep.Scenarios[0].Problems {
		if d.Source == "expect" && d.Path == "end.reason" && d.Want == "goal_reached_by_tool" && d.Got == "goal_reached_by_environment" && len(d.Decisions) == 4 {
			found = true
		}
	}
	if !found {
		t.Errorf("no structured end.reason mismatch in %+v", rep.Scenarios[0].Problems)
	}
}

func TestRun_handshakeErrorsAreSetupErrors(t *testing.T) {
	code, _, errs := run(t, "run", "--impl", "sh testdata/impls/bad-protocol.sh")
	if code != ExitSetup || !strings.Contains(errs, "protocol 99") {
		t.Errorf("exit %d: %s", code, errs)
	}
	code, _, errs = run(t, "run", "--impl", "/nonexistent/impl")
	if code != ExitSetup {
		t.Errorf("missing binary: exit %d: %s", code, errs)
	}
	if left := leftoverSleeps(); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}

func TestRun_knownFailing(t *testing.T) {
	t.Parallel()
	selfImpl(t)
	dir := t.TempDir()
	write := func(body string) string {
		p := filepath.Join(dir, "kf.txt")
		os.WriteFile(p, []byte(body), 0o644)
		return p
	}
	impl := "sh testdata/impls/wrong-field.sh"
	// completion.by-tool fails under wrong-field; listing it makes the run
	// pass, as long as something else passed.
	code, out, _ := run(t, "run", "--impl", impl, "--run", "completion.by-tool,executor.missing-handler", "--known-failing", write("completion.by-tool  # reason is rewritten\n"))
	if code != ExitOK || !strings.Contains(out, "1 passed, 0 failed, 0 skipped, 1 known failing") {
		t.Errorf("listed failure: exit %d\n%s", code, out)
	}
	// With nothing passed, a known-failing list does not make a green.
	code, out, _ = run(t, "run", "--impl", impl, "--run", "completion.by-tool", "--known-failing", write("completion.by-tool  # reason is rewritten\n"))
	if code != ExitFail || !strings.Contains(out, "no scenario passed (0 skipped, 1 known failing)") {
		t.Errorf("only a listed failure: exit %d\n%s", code, out)
	}
	// A listed scenario that passes is stale.
	code, out, _ = run(t, "run", "--run", "outcome.normal-return", "--known-failing", write("outcome.*  # was broken\n"))
	if code != ExitFail || !strings.Contains(out, "passes but is listed as known failing") {
		t.Errorf("stale entry: exit %d\n%s", code, out)
	}
	// A pattern that matches nothing is an error.
	code, out, _ = run(t, "run", "--run", "outcome.normal-return", "--known-failing", write("nosuch.*  # typo\n"))
	if code != ExitFail || !strings.Contains(out, `pattern "nosuch.*" matches no scenario`) {
		t.Errorf("unmatched pattern: exit %d\n%s", code, out)
	}
	// An entry without a reason is a setup error naming file:line.
	code, _, errs := run(t, "run", "--known-failing", write("# header\nparse.*\n"))
	if code != ExitSetup || !strings.Contains(errs, "kf.txt:2:") {
		t.Errorf("missing reason: exit %d: %s", code, errs)
	}
}

func TestRun_transcriptsAndReports(t *testing.T) {
	t.Parallel()
	exe := selfImpl(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "report.xml")
	code, stdout, errs := run(t, "run", "--impl", exe+" serve-reference", "--run", "cancel.during-tool-call", "--transcripts", dir, "--report", "junit", "--out", out)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, errs)
	}
	xml, _ := os.ReadFile(out)
	if !bytes.Contains(xml, []byte(`<testcase name="cancel.during-tool-call"`)) {
		t.Errorf("junit report:\n%s", xml)
	}
	tr, err := os.ReadFile(filepath.Join(dir, "cancel.during-tool-call.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"from":"runner","message":{"type":"run"`, `"type":"handler_call"`, `"type":"cancel"`, `"type":"result"`} {
		if !bytes.Contains(tr, []byte(want)) {
			t.Errorf("transcript lacks %s", want)
		}
	}
	page := filepath.Join(dir, "report.html")
	if code, stdout, errs := run(t, "run", "--impl", exe+" serve-reference", "--run", "cancel.during-tool-call", "--format", "html", "--out", page); code != ExitOK {
		t.Fatalf("html: exit %d\n%s\n%s", code, stdout, errs)
	}
	if html, _ := os.ReadFile(page); !bytes.Contains(html, []byte(`id="s-cancel.during-tool-call" data-verdict="pass"`)) {
		t.Errorf("html report lacks the scenario's passing row")
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{{}, {"nope"}, {"run", "--report", "pdf"}, {"run", "--run", "no.such.*"}, {"run", "-p", "0"}, {"diff", "one.json"}} {
		if code, _, _ := run(t, args...); code != ExitSetup {
			t.Errorf("%v: exit %d, want %d", args, code, ExitSetup)
		}
	}
}

func TestRun_unclaimedCapabilitiesAreSkipped(t *testing.T) {
	t.Parallel()
	selfImpl(t)
	// A kernel without the protocol options: its sink scenarios are
	// self-reported, which --require none accepts.
	code, out, errs := run(t, append([]string{"run", "--impl", "sh testdata/impls/limited.sh", "--require", "none"}, suiteSlice(t)...)...)
	if code != ExitOK {
		t.Fatalf("skips failed the run: exit %d\n%s\n%s", code, out, errs)
	}
	for _, want := range []string{"0 failed", "implementation does not claim resume", "Skipped, by the capabilities they need:"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, " 0 skipped") {
		t.Errorf("nothing was skipped:\n%s", out)
	}
}

// TestRun_cancelledCallsMustBeReleased: an implementation that does not
// acknowledge the calls a cancellation abandoned fails the release checks
// (0004.D4.release), in the model-call and the tool-call scenario alike.
func TestRun_cancelledCallsMustBeReleased(t *testing.T) {
	t.Parallel()
	selfImpl(t)
	code, out, errs := run(t, "run", "--impl", "sh testdata/impls/keeps-waiting.sh", "--run", "cancel.implementation-keeps-waiting,cancel.during-tool-call")
	if code != ExitFail {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	for _, want := range []string{
		"model_calls_released: want 1, got (absent) (expect and golden)",
		"handler_calls[0].released: want true, got (absent) (expect and golden)",
		"0 passed, 2 failed",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

// TestSetupErrors: a wrong path, an empty directory or a bad flag value is
// one sentence and exit 2, never a green run or a page of failures.
func TestSetupErrors(t *testing.T) {
	empty := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"gate", "--dir", "/nonexistent"}, "gate --dir /nonexistent: no such file or directory"},
		{[]string{"gate", "--dir", empty}, "no *.yaml in scenarios/, so there is nothing to gate"},
		{[]string{"run", "--scenarios", "/nonexistent"}, "--scenarios /nonexistent: no such file or directory"},
		{[]string{"run", "--scenarios", empty}, "--scenarios " + empty + ": no *.yaml files in it"},
		{[]string{"run", "--goldens", empty}, "--goldens " + empty + ": no *.json files in it"},
		{[]string{"coverage", "--design", empty}, "--design " + empty + ": no *.md files in it"},
		{[]string{"run", "--run", "outcome.*,nomatch.*"}, `--run: pattern "nomatch.*" matches no scenario`},
		{[]string{"run", "--timeout", "-1s"}, "--timeout -1s: give a positive duration"},
		{[]string{"run", "--timeout", "0s"}, "--timeout 0s: give a positive duration"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, out, errs := run(t, tc.args...)
			if code != ExitSetup || !strings.Contains(errs, tc.want) {
				t.Errorf("exit %d, stderr %q (stdout %q); want exit 2 and %q", code, errs, out, tc.want)
			}
			if strings.Count(strings.TrimSpace(errs), "\n") > 0 {
				t.Errorf("more than one line:\n%s", errs)
			}
		})
	}
}

// TestSummaryCountsRunErrors: an unmatched known-failing pattern fails the
// run, and the closing line says so instead of "0 failed".
func TestSummaryCountsRunErrors(t *testing.T) {
	kf := filepath.Join(t.TempDir(), "known.txt")
	os.WriteFile(kf, []byte("nomatch.* # a pattern that matches nothing\n"), 0o644)
	code, out, _ := run(t, "run", "--run", "outcome.normal-return", "--known-failing", kf)
	if code != ExitFail || !strings.Contains(out, "1 passed, 0 failed, 0 skipped, 0 known failing, 1 error") {
		t.Errorf("exit %d:\n%s", code, out)
	}
}

// TestValidateTheUsageHint: the usage hint's glob, which picks up the
// schemas beside the files, validates on a clean checkout.
func TestValidateTheUsageHint(t *testing.T) {
	args := []string{"validate"}
	for _, g := range []string{"../../scenarios/*.yaml", "../../trajectories/*.json", "../../scenarios/*.json"} {
		m, _ := filepath.Glob(g)
		args = append(args, m...)
	}
	code, out, errs := run(t, args...)
	if code != ExitOK || !strings.Contains(out, "trajectory.schema.json: ok (a JSON Schema)") {
		t.Errorf("exit %d\n%s\n%s", code, out, errs)
	}
}

// TestBadGoldenNamesItsPath: with --goldens the problem names the file
// that is broken, not the built-in set.
func TestBadGoldenNamesItsPath(t *testing.T) {
	dir := t.TempDir()
	m, _ := filepath.Glob("../../trajectories/*.json")
	for _, f := range m {
		data, _ := os.ReadFile(f)
		os.WriteFile(filepath.Join(dir, filepath.Base(f)), data, 0o644)
	}
	os.WriteFile(filepath.Join(dir, "outcome.env-error.json"), []byte("{"), 0o644)
	code, out, _ := run(t, "run", "--goldens", dir, "--run", "outcome.env-error")
	if code != ExitFail || !strings.Contains(out, filepath.Join(dir, "outcome.env-error.json")+": not JSON") {
		t.Errorf("exit %d:\n%s", code, out)
	}
}

// TestOutputPathsCheckedFirst: an output that cannot be written is a
// set-up error before any scenario runs, not a report lost afterwards or
// a directory silently left empty.
func TestOutputPathsCheckedFirst(t *testing.T) {
	file := filepath.Join(t.TempDir(), "a-file")
	os.WriteFile(file, []byte("x"), 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--out", "/nonexistent/dir/report.txt"}, "--out: "},
		{[]string{"run", "--out", filepath.Dir(file)}, "is a directory; give a file name inside it"},
		{[]string{"run", "--record", file}, "--record: "},
		{[]string{"run", "--impl", "true", "--transcripts", file}, "--transcripts: "},
	} {
		code, out, errs := run(t, tc.args...)
		if code != ExitSetup || !strings.Contains(errs, tc.want) || strings.Contains(out, "passed") {
			t.Errorf("%v: exit %d\nstdout:\n%s\nstderr:\n%s", tc.args, code, out, errs)
		}
	}
	// A report written to --out is complete, with the usual permissions.
	rep := filepath.Join(t.TempDir(), "r.json")
	if code, _, errs := run(t, "run", "--run", "outcome.normal-return", "--report", "json", "--out", rep); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	st, err := os.Stat(rep)
	data, _ := os.ReadFile(rep)
	if err != nil || st.Mode().Perm() != 0o644 || !json.Valid(data) {
		t.Errorf("report %v %v valid=%v", st.Mode(), err, json.Valid(data))
	}
}

// TestImplIsAShellCommandLine: --impl runs through sh -c in a process
// group of its own, so cd, variables and sourcing work; a process that
// never says hello fails at --handshake-timeout, not after 10 s.
func TestImplIsAShellCommandLine(t *testing.T) {
	exe := selfImpl(t)
	code, out, errs := run(t, "run", "--impl", "cd / && GREETING=1 "+exe+" serve-reference", "--run", "outcome.normal-return")
	if code != ExitOK {
		t.Errorf("cd && VAR=1 impl: exit %d\n%s\n%s", code, out, errs)
	}
	start := time.Now()
	// sleep 120: a runner that ignored the handshake timeout would wait
	// for it; the bound leaves room for a loaded machine, not for that.
	code, _, errs = run(t, "run", "--impl", "sleep 120", "--handshake-timeout", "300ms")
	if code != ExitSetup || !strings.Contains(errs, "no hello within 300ms (--handshake-timeout)") || time.Since(start) > 60*time.Second {
		t.Errorf("exit %d after %s: %s", code, time.Since(start), errs)
	}
}

// TestImplementationStderrPerScenario: each line the implementation writes
// to stderr is tagged with the scenario it was running, and kept with that
// scenario for the JUnit report's system-err.
func TestImplementationStderrPerScenario(t *testing.T) {
	t.Parallel()
	exe := selfImpl(t)
	impl := exe + " serve-reference --plain | tee /dev/stderr"
	dir := t.TempDir()
	var out, errb bytes.Buffer
	code := Main(context.Background(), []string{"run", "--impl", impl, "--run", "outcome.*", "-p", "2", "--report", "junit", "--out", filepath.Join(dir, "j.xml")}, strings.NewReader(""), &out, &errb)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	// tee writes stderr asynchronously: the copy of a scenario's last line
	// (its result) may arrive after the runner has taken the result, so it
	// is checked with a call made while the scenario runs.
	// Calls are numbered per process, across scenarios: the number depends
	// on which scenarios ran before, the tag does not.
	if !regexp.MustCompile(`(?m)^\[outcome\.env-error\] \{"type":"handler_call","call":\d+,"phase":0,"tool":"search"`).MatchString(errb.String()) {
		t.Errorf("stderr lines are not tagged with their scenario:\n%.2000s", errb.String())
	}
	junit, _ := os.ReadFile(filepath.Join(dir, "j.xml"))
	if !strings.Contains(string(junit), "<system-err><![CDATA[") || !strings.Contains(string(junit), `"content":"Find the regulation."`) {
		t.Errorf("JUnit report has no per-scenario system-err:\n%.3000s", junit)
	}
}

// TestUpdateRefusesAForeignImplementation: goldens are the reference's
// record, so the ginkgo suite's -update refuses to run with POLYLOOP_IMPL
// (which once rewrote 64 goldens from another implementation).
func TestUpdateRefusesAForeignImplementation(t *testing.T) {
	t.Parallel()
	requireLong(t, "builds the conformance suite's test binary (a link of ginkgo and the reference)")
	bin := filepath.Join(t.TempDir(), "conformance.test")
	build := exec.Command("go", "test", "-c", "-o", bin, "../../conformance")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the conformance suite: %v\n%s", err, out)
	}
	before, _ := os.ReadFile("../../trajectories/outcome.env-error.json")
	cmd := exec.Command(bin, "-update")
	cmd.Dir = "../../conformance"
	cmd.Env = append(os.Environ(), "POLYLOOP_IMPL=/nonexistent/impl")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "-update writes goldens from the reference only; unset POLYLOOP_IMPL") {
		t.Errorf("err %v:\n%.3000s", err, out)
	}
	if after, _ := os.ReadFile("../../trajectories/outcome.env-error.json"); string(after) != string(before) {
		t.Error("a golden changed")
	}
}
