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
// stdio protocol, as `polyloop-conform run --impl` does. Like the runner,
// it needs a Unix (process groups, named pipes); polyloopkit itself builds
// everywhere, without its fork server where there are no process groups.
package polylooptest

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/polyloop/polyloop-conform/internal/implproc"
	"github.com/polyloop/polyloop-conform/internal/inproc"
	"github.com/polyloop/polyloop-conform/polyloopkit"
)

// Run runs the suite against k in process, one parallel subtest of t per
// scenario, so k.Run is called from several goroutines at once (`go test
// -parallel 1` runs one scenario at a time). A scenario that needs a
// capability k does not claim is skipped. Each run is a polyloopkit.Serve session in the test's own
// process; the resume after a crash point or a cancelled run, which must
// not share the memory of the run that stopped, is a new process: the test
// binary itself, started again with -test.run naming t, in which this same
// call serves k over the stdio protocol (polyloopkit.Main) instead of
// judging it. So the code before Run in the test function (and TestMain)
// runs in that process too: keep it cheap, free of side effects, and
// silent on stdout, which there carries the protocol.
func Run(t *testing.T, k polyloopkit.Kernel, opts ...Option) {
	t.Helper()
	if os.Getenv(serveEnv) == t.Name() {
		k.NoForkServer = true
		polyloopkit.Main(k) // the resuming process: it exits when the runner is done
	}
	cfg, err := configure(opts)
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatalf("polylooptest: the test binary, to resume runs in a process of their own: %v", err)
	}
	name := t.Name()
	d := &inproc.Driver{Kernel: k, Resumer: &implproc.Client{
		Command: func() *exec.Cmd {
			cmd := exec.Command(exe, "-test.run="+exactly(name))
			cmd.Env = append(os.Environ(), serveEnv+"="+name)
			return cmd
		},
		Logs: os.Stderr,
	}}
	ctx := cfg.interruptible(t)
	if err := d.Start(ctx); err != nil {
		t.Fatalf("polylooptest: kernel %q: %v", k.Name, err)
	}
	cfg.run(ctx, t, d)
}

// serveEnv names, in a process the test binary starts to resume a run,
// the test whose Run serves the kernel instead of judging it.
const serveEnv = "POLYLOOPTEST_SERVE"

// exactly is a -test.run pattern that selects the test named name and
// no other.
func exactly(name string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return strings.Join(parts, "/")
}

// RunCommand runs the suite against the implementation that cmdline
// starts (through /bin/sh -c, in a process group of its own) over the
// stdio protocol, as `polyloop-conform run --impl cmdline` does: crash
// points kill real processes, and a resume is a new process. Its stderr
// goes to the test's stderr.
func RunCommand(t *testing.T, cmdline string, opts ...Option) {
	t.Helper()
	cfg, err := configure(opts)
	if err != nil {
		t.Fatal(err)
	}
	c := &implproc.Client{
		Command: func() *exec.Cmd { return exec.Command("/bin/sh", "-c", cmdline) },
		Logs:    os.Stderr,
	}
	ctx := cfg.interruptible(t)
	if err := c.Start(ctx); err != nil {
		t.Fatalf("polylooptest: %q: %v", cmdline, err)
	}
	t.Cleanup(c.Close)
	cfg.run(ctx, t, c)
}
