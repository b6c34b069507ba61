package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRun_wireLiars: serve-reference, with every protocol option, behind
// a proxy that keeps every message's content and changes when it reaches
// the runner or who measured (testdata/liars/wire_liar.py). Each passed on
// the runner that compared events by content and order and took
// context_size from the implementation; each now fails with one sentence
// naming its decision. (The liars start an interpreter and a runner
// binary; on a loaded machine their hello can take longer than the
// default 10 s, hence --handshake-timeout in these tests.)
func TestRun_wireLiars(t *testing.T) {
	t.Parallel()
	selfImpl(t)
	for _, tc := range []struct {
		mode, scenarios, want string
	}{
		{"events-buffered", "outcome.normal-return", "before its audit sink received run_started (or run_resumed): events reach the sinks when they happen, not buffered to the end of the run (observed)"},
		{"settles-early", "resume.completed-steps-not-rerun", "the audit sink received the tool_call event of step 1 before the journal point after its action_result: a settlement event reports a result the journal already holds (observed)"},
		{"sizes-itself", "context.size-per-block", "of the model input was never measured by the runner's size measure before the model call; with wire_measure every block of every model input is measured by the runner (observed)"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			impl := python(t) + " " + filepath.Join("testdata", "liars", "wire_liar.py") + " " + tc.mode
			code, out, errs := run(t, "run", "--impl", impl, "--run", tc.scenarios, "--timeout", "30s", "--handshake-timeout", "60s")
			if code != ExitFail || !strings.Contains(out, tc.want) {
				t.Errorf("exit %d, want %d and %q\n%s\n%s", code, ExitFail, tc.want, out, errs)
			}
		})
	}
}

// TestRun_hiddenEnd: a kernel without journal-lines journals an end for a
// cancelled run where it does not read it back. Nothing on the wire shows
// it, so the pass is self-reported, and run fails it unless the team opts
// out with --require none.
func TestRun_hiddenEnd(t *testing.T) {
	t.Parallel()
	selfImpl(t)
	impl := python(t) + " " + filepath.Join("testdata", "liars", "wire_liar.py") + " hides-end"
	code, out, errs := run(t, "run", "--impl", impl, "--run", "cancel.resume-after-safe-tool", "--timeout", "30s", "--handshake-timeout", "60s")
	if code != ExitFail || !strings.Contains(out, "evidence: self-reported — the implementation stages what the journal of the stopped run holds (no end, 0004.D4; the runner reads the journal only with journal-lines)") {
		t.Errorf("exit %d, want %d\n%s\n%s", code, ExitFail, out, errs)
	}
	code, out, errs = run(t, "run", "--impl", impl, "--run", "cancel.resume-after-safe-tool", "--timeout", "30s", "--handshake-timeout", "60s", "--require", "none")
	if code != ExitOK || !strings.Contains(out, "Self-reported passes") {
		t.Errorf("--require none: exit %d, want %d\n%s\n%s", code, ExitOK, out, errs)
	}
}

// TestRun_capabilitiesPinned: the next release of a kernel stops claiming
// context-assembly and events. Its scenarios are skipped and the rest
// pass, so without --capabilities the gate stays green; with it, the run
// fails naming what is missing, and the JSON report lists what was claimed.
func TestRun_capabilitiesPinned(t *testing.T) {
	t.Parallel()
	selfImpl(t)
	impl := python(t) + " " + filepath.Join("testdata", "liars", "wire_liar.py") + " drops-capabilities"
	sel := "outcome.*,events.*"
	if !long() { // one scenario it still runs, one it no longer claims
		sel = "outcome.normal-return,events.raw-and-repaired"
	}
	out := filepath.Join(t.TempDir(), "r.json")
	code, text, errs := run(t, "run", "--impl", impl, "--run", sel, "--capabilities", "json-actions,context-assembly,events,wire-sink", "--format", "json", "--out", out, "--handshake-timeout", "60s")
	if code != ExitFail {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, ExitFail, text, errs)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Errors  []string `json:"errors"`
		Require string   `json:"require"`
		Claimed struct {
			Capabilities []string `json:"capabilities"`
			Options      []string `json:"protocol_options"`
		} `json:"claimed"`
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(rep.Errors, "\n"), "the implementation does not claim context-assembly, events, which --capabilities expects") {
		t.Errorf("errors %q do not name the missing capabilities", rep.Errors)
	}
	if strings.Join(rep.Claimed.Capabilities, ",") != "json-actions,code-actions,resume,cancellation,project-executor" ||
		!strings.Contains(strings.Join(rep.Claimed.Options, ","), "wire-sink") || rep.Require != "observed" {
		t.Errorf("the report's claim is %+v, require %q", rep.Claimed, rep.Require)
	}
	// The same release without the pin: green, which is the lie.
	if code, text, errs := run(t, "run", "--impl", impl, "--run", sel, "--handshake-timeout", "60s"); code != ExitOK {
		t.Errorf("without --capabilities: exit %d\n%s\n%s", code, text, errs)
	}
	if code, _, errs := run(t, "run", "--capabilities", "json-actions,telepathy"); code != ExitSetup || !strings.Contains(errs, `"telepathy" is no capability`) {
		t.Errorf("an unknown capability: exit %d\n%s", code, errs)
	}
}
