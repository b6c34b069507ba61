// Command crashchild is the process the crash-point harness kills: it runs
// one scenario up to a journal write point, or resumes its journal. The
// harness builds it without the race detector, because process start-up is
// the harness's whole cost and the kernel is race-tested elsewhere.
package main

import (
	"fmt"
	"os"

	"github.com/polyloop/polyloop-conform/internal/crashpoint"
)

func main() {
	if !crashpoint.ChildMain() {
		fmt.Fprintf(os.Stderr, "crashchild: set %s, %s and %s; this binary is started by the crash-point harness\n",
			crashpoint.EnvScenario, crashpoint.EnvDir, crashpoint.EnvPoint)
		os.Exit(2)
	}
}
