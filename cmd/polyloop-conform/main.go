// Command polyloop-conform runs the PolyLoop conformance scenarios against
// the reference kernel or any implementation speaking the stdio protocol,
// verifies recorded trajectories, and gates design-doc changes.
//
// Run "polyloop-conform help" for the commands.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/polyloop/polyloop-conform/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
