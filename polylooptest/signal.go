package polylooptest

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"testing"
)

// interruptible is the suite's context: SIGINT or SIGTERM (Ctrl-C while
// `go test` runs) ends it, so the scenarios running stop (their
// sessions and processes killed, their journals removed), the ones not
// started are skipped, and the report is still written, marked
// interrupted. A second signal gets the default behaviour: the handler
// is gone once the first came, and when the test ends.
func (c *config) interruptible(t *testing.T) context.Context {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	context.AfterFunc(ctx, stop)
	t.Cleanup(stop)
	return ctx
}
