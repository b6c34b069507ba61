package cli

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// hangBound is far above a healthy run (about 1 s) and far below a hang.
const hangBound = 90 * time.Second

// TestNeverHang: an implementation that stops reading its stdin is still
// stopped by --timeout (the runner's writes blocked forever before), and
// a detached child holding the implementation's output does not keep the
// runner waiting once the implementation's process group is gone.
//
// The bounds are generous on purpose: what is judged is "stops at all"
// (a hang here is forever, or the detached child's 3000 s), not speed, so
// a loaded 2-core machine must not turn it red.
func TestNeverHang(t *testing.T) {
	t.Parallel()
	selfImpl(t)
	impls := filepath.Join("testdata", "impls")

	start := time.Now()
	code, out, errs := run(t, "run", "--impl", "sh "+filepath.Join(impls, "stops-reading.sh"), "--run", "outcome.normal-return", "--timeout", "1s")
	if code != ExitFail || !strings.Contains(out, "timed out after 1s") {
		t.Errorf("stops reading: exit %d\n%s\n%s", code, out, errs)
	}
	if took := time.Since(start); took > hangBound {
		t.Errorf("stops reading: the run took %s with --timeout 1s", took)
	}

	defer exec.Command("pkill", "-f", "sleep 3000.77").Run()
	start = time.Now()
	code, out, errs = run(t, "run", "--impl", "sh "+filepath.Join(impls, "detached-child.sh"), "--run", "outcome.normal-return")
	if code != ExitOK {
		t.Errorf("detached child: exit %d\n%s\n%s", code, out, errs)
	}
	if took := time.Since(start); took > hangBound {
		t.Errorf("detached child: the run took %s; the runner waited for a child outside the process group", took)
	}
}
