package implproc

import (
	"context"
	"os"
	"os/exec"
	"testing"
)

// BenchmarkResumeStart is the process start a resume pays: a new process
// from --impl, its machine built (internal/isolate) or not, up to the end
// of its handshake, then killed. The implementation is the shell command
// in POLYLOOP_BENCH_IMPL (e.g. "polyloop-conform serve-reference", or the
// Python example); unset, the benchmark is skipped. The fork server is
// off: a resume on a machine never forks.
func BenchmarkResumeStart(b *testing.B) {
	impl := os.Getenv("POLYLOOP_BENCH_IMPL")
	if impl == "" {
		b.Skip("POLYLOOP_BENCH_IMPL names no implementation to start")
	}
	for _, tc := range []struct {
		name        string
		noIsolation bool
	}{{"machine", false}, {"no-isolation", true}} {
		b.Run(tc.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				c := &Client{Command: func() *exec.Cmd { return exec.Command("/bin/sh", "-c", impl) }, NoFork: true, NoIsolation: tc.noIsolation}
				if err := c.Start(context.Background()); err != nil {
					b.Fatal(err)
				}
				c.Close()
			}
		})
	}
}
