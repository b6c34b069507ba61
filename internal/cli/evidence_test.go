package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoGreenWithoutEvidence: each of these exited 0 before; a run that
// shows nothing conforming is now a failure with one sentence saying why.
func TestNoGreenWithoutEvidence(t *testing.T) {
	t.Parallel()
	selfImpl(t)
	wip := filepath.Join(t.TempDir(), "known.txt")
	if err := os.WriteFile(wip, []byte("* # wip\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	impls := filepath.Join("testdata", "impls")
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no capability claimed", []string{"run", "--impl", "sh " + filepath.Join(impls, "no-capability.sh"), "--run", "outcome.*"},
			ExitFail, "the implementation claims no capability"},
		{"every scenario skipped", []string{"run", "--impl", "sh " + filepath.Join(impls, "limited.sh"), "--run", "resume.*"},
			ExitFail, "skipped, 0 known failing): a run that shows nothing conforming is not a pass"},
		{"a known-failing list that excuses everything", []string{"run", "--impl", "sh " + filepath.Join(impls, "exits-after-hello.sh"), "--known-failing", wip, "--run", "outcome.*,parse.*"},
			ExitFail, `pattern "*" matches every scenario of the suite`},
		{"an empty --impl", []string{"run", "--impl", " "}, ExitSetup, "an empty command line"},
		{"explore without journal points", []string{"explore", "--handshake-timeout", "60s", "--impl", python(t) + " " + filepath.Join("testdata", "liars", "liar.py") + " no-points", "--run", "resume.never-not-replayed"},
			ExitFail, "sent no journal_point"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code, out, errs := run(t, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s\n%s", code, tc.code, out, errs)
			}
			if !strings.Contains(out+errs, tc.want) {
				t.Errorf("output lacks %q:\n%s\n%s", tc.want, out, errs)
			}
		})
	}
}
