// Package polylooptest runs the polyloop-conform suite from a Go team's
// own `go test`, the way testing/fstest.TestFS and testing/slogtest.Run
// judge a file system or a log handler: the scenarios, goldens and
// decision records built into this module, each scenario a subtest named
// by its ID.
//
//	func TestConformance(t *testing.T) {
//		polylooptest.Run(t, mykernel.Kernel(),
//			polylooptest.KnownFailing("testdata/known-failing.txt"),
//			polylooptest.Report("html", "conformance.html"))
//	}
//
// Name the test TestConformance, and `go test -run 'Conformance/^resume\.'`
// runs the resume family, `-v` names every scenario. Run judges a
// polyloopkit.Kernel in process, through the kit's protocol on in-memory
// pipes (no process, no stdio); RunCommand judges a command line over the
// stdio protocol, as `polyloop-conform run --impl` does.
package polylooptest

import (
	"context"
	"os/exec"
	"testing"

	"github.com/polyloop/polyloop-conform/internal/implproc"
	"github.com/polyloop/polyloop-conform/internal/inproc"
	"github.com/polyloop/polyloop-conform/polyloopkit"
)

// Run runs the suite against k in process, one parallel subtest of t per
// scenario. A scenario that needs a capability k does not claim is
// skipped. In process, a resume runs in the same process as the run it
// resumes, so no kill clears what the kernel kept in memory: resume
// verdicts are self-reported, and fail under the default evidence
// requirement unless RequireNone is given; RunCommand judges them in
// processes of their own.
func Run(t *testing.T, k polyloopkit.Kernel, opts ...Option) {
	t.Helper()
	cfg, err := configure(opts)
	if err != nil {
		t.Fatal(err)
	}
	d := &inproc.Driver{Kernel: k}
	if err := d.Start(context.Background()); err != nil {
		t.Fatalf("polylooptest: kernel %q: %v", k.Name, err)
	}
	cfg.run(t, d)
}

// RunCommand runs the suite against the implementation that cmdline
// starts (through /bin/sh -c, in a process group of its own) over the
// stdio protocol, as `polyloop-conform run --impl cmdline` does: crash
// points kill real processes, and a resume is a new process. Its stderr
// goes to the test log.
func RunCommand(t *testing.T, cmdline string, opts ...Option) {
	t.Helper()
	cfg, err := configure(opts)
	if err != nil {
		t.Fatal(err)
	}
	c := &implproc.Client{
		Command: func() *exec.Cmd { return exec.Command("/bin/sh", "-c", cmdline) },
		Logs:    logWriter{t},
	}
	ctx, stop := context.WithCancel(context.Background())
	t.Cleanup(stop)
	if err := c.Start(ctx); err != nil {
		t.Fatalf("polylooptest: %q: %v", cmdline, err)
	}
	t.Cleanup(c.Close)
	cfg.run(t, c)
}

// logWriter copies the implementation's stderr to the test's log.
type logWriter struct{ t *testing.T }

func (w logWriter) Write(p []byte) (int, error) {
	w.t.Logf("%s", p)
	return len(p), nil
}
