package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// SignalError is the cause of a context cancelled by SIGINT or SIGTERM.
type SignalError struct {
	Signal os.Signal
}

func (e *SignalError) Error() string { return "stopped by " + e.Signal.String() }

// exitCode is the shell's convention for a process ended by a signal.
func (e *SignalError) exitCode() int {
	if s, ok := e.Signal.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return 128 + int(syscall.SIGINT)
}

// Exec is the command's main: it runs Main with a context that the first
// SIGINT or SIGTERM cancels, so a run stops starting scenarios, stops the
// running ones and kills their processes, writes the report of what ran
// and exits 130 or 143; a second signal exits at once.
func Exec(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		first, ok := <-sigs
		if !ok {
			return
		}
		se := &SignalError{Signal: first}
		cancel(se)
		if second, ok := <-sigs; ok {
			fmt.Fprintf(stderr, "polyloop-conform: %s again, exiting now\n", second)
			os.Exit((&SignalError{Signal: second}).exitCode())
		}
	}()
	code := Main(ctx, args, stdin, stdout, stderr)
	var se *SignalError
	if errors.As(context.Cause(ctx), &se) {
		return se.exitCode()
	}
	return code
}
