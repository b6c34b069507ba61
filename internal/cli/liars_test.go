package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestRun_lyingImplementations: serve-reference behind an adapter that
// changes what reaches the wire while the trajectory it reports stays
// the reference's. Each passed every scenario before the runner held the
// trajectory to the wire; each must now fail with a sentence saying what
// the trajectory claims and what was sent.
func TestRun_lyingImplementations(t *testing.T) {
	t.Parallel()
	selfImpl(t)
	for _, tc := range []struct {
		mode, scenarios, want string
	}{
		{"garbage-input", "outcome.normal-return", `the implementation sent [{"role":"user","content":"GARBAGE"}`},
		{"rm-rf", "executor.project-executor-beside-tools", `the implementation sent the project executor {"kind":"code","code":"rm -rf /"}`},
		{"coerced-label", "validation.no-coercion", `its handler received {"label":7,"limit":10}`},
		{"claims-handler-calls", "executor.missing-handler", `the trajectory says the handlers were called [{"tool":"submit","arguments":{}}]; the runner's handlers received []`},
		{"skips-intent", "resume.never-not-replayed", "before the journal point after its action_intent: the action ran before its intent was written"},
		{"fake-release", "cancel.during-tool-call", "after the runner cancelled the run: a cancelled run abandons its calls and stops"},
		{"executes-twice", "executor.project-executor-beside-tools", "the implementation sent the project executor 2 calls for one action"},
		{"sink-skipped", "events.sink-failure-continues", "the audit sink received only 0 event(s)"},
		{"measure-self", "context.unknown-block-before-model-call", "the runner offered its size measure (wire_measure), yet the implementation sent model calls without asking it"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			impl := python(t) + " " + filepath.Join("testdata", "liars", "liar.py") + " " + tc.mode
			code, out, errs := run(t, "run", "--impl", impl, "--run", tc.scenarios, "--timeout", "30s", "--handshake-timeout", "60s")
			if code != ExitFail {
				t.Fatalf("exit %d, want %d\n%s\n%s", code, ExitFail, out, errs)
			}
			// A call after a cancel ends the exchange at once: a run-level
			// failure; the others are the trajectory against the wire.
			if !strings.Contains(out, tc.want) || (tc.mode != "fake-release" && !strings.Contains(out, "(observed)")) {
				t.Errorf("report lacks %q:\n%s", tc.want, out)
			}
		})
	}
	// The journal kept beside the directory the runner named: the run and
	// the resume agree with each other, and only a crash exploration
	// would have noticed.
	t.Run("journal-elsewhere", func(t *testing.T) {
		t.Parallel()
		impl := python(t) + " " + filepath.Join("testdata", "liars", "liar.py") + " journal-elsewhere"
		code, out, errs := run(t, "run", "--impl", impl, "--run", "resume.safe-replayed,cancel.resume-after-model-call", "--timeout", "30s", "--handshake-timeout", "60s")
		if code != ExitFail || !strings.Contains(out, "holds no file after it: keep the step journal in the directory the run message names") || !strings.Contains(out, "0 passed, 2 failed") {
			t.Errorf("exit %d\n%s\n%s", code, out, errs)
		}
	})
}

// TestRun_partialKernel: capabilities are a path, not a switch. A kernel
// that claims json-actions only, and fills neither events nor model
// inputs, is not judged on them in any scenario: no failure, and the
// report says what was not judged.
func TestRun_partialKernel(t *testing.T) {
	t.Parallel()
	selfImpl(t)
	impl := python(t) + " " + filepath.Join("testdata", "liars", "liar.py") + " json-only"
	code, out, errs := runBuilt(t, append([]string{"run", "--impl", impl, "--timeout", "30s", "--handshake-timeout", "60s"}, suiteSlice(t)...)...)
	if code != ExitOK || !strings.Contains(out, ", 0 failed,") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	for _, want := range []string{"Not judged, by the capabilities not claimed:", "context-assembly  steps[].model_input, steps[].context_size (differed in", "events            events, event_sink_failures (differed in"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "differed in 0 scenario") {
		t.Errorf("the partial kernel's trajectories should differ where it claims nothing:\n%s", out)
	}
}
