package polylooptest_test

import (
	"testing"

	"github.com/polyloop/polyloop-conform/polyloopkit/refkernel"
	"github.com/polyloop/polyloop-conform/polylooptest"
)

// A team's kernel package holds a test like this one; name it
// TestConformance, and `go test -run 'Conformance/^cancel\.' -v` judges
// the cancel family, naming every scenario.
func ExampleRun() {
	var t *testing.T // the test function's own t
	polylooptest.Run(t, refkernel.Kernel(),
		polylooptest.KnownFailing("testdata/known-failing.txt"),
		polylooptest.Capabilities("json-actions", "events"),
		polylooptest.Since("0.2.0"),
		polylooptest.Report("html", "conformance.html"))
}

// The same kernel judged as a command line over the stdio protocol, as
// `polyloop-conform run --impl` judges it.
func ExampleRunCommand() {
	var t *testing.T // the test function's own t
	polylooptest.RunCommand(t, "./bin/my-kernel", polylooptest.Timeout(30e9))
}
