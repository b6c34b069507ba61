// Command polyloop-conform runs the PolyLoop conformance scenarios against
// the reference kernel or any implementation speaking the stdio protocol,
// verifies recorded trajectories, and gates design-doc changes.
//
// Run "polyloop-conform help" for the commands.
package main

import (
	"os"

	"github.com/polyloop/polyloop-conform/internal/cli"
)

func main() {
	os.Exit(cli.Exec(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
