package cli

import (
	"context"
	"flag"
	"fmt"

	"github.com/polyloop/polyloop-conform/internal/deviation"
	"github.com/polyloop/polyloop-conform/internal/protocol"
	"github.com/polyloop/polyloop-conform/internal/refdriver"
	"github.com/polyloop/polyloop-conform/internal/serveref"
)

// SpecVersion names the design docs the reference implements.
const SpecVersion = "polyloop-design-2026-08 (0002 0003 0004 0006 0007 0008 0010 0011)"

func serveCmd(ctx context.Context, args []string, s stdio) int {
	fs := flag.NewFlagSet("serve-reference", flag.ContinueOnError)
	fs.SetOutput(s.err)
	var mutants ignoreFlag
	fs.Var(&mutants, "mutant", "serve the reference with this named deviation from the design turned on (repeatable; polyloop-conform selfcheck lists them)")
	reword := fs.Bool("reword", false, "word every sentence the design leaves to the implementation differently (the suite must still pass; with run --strict it must fail)")
	plain := fs.Bool("plain", false, "offer none of the protocol options (wire-sink, wire-measure, journal-lines): stage every fault in the process, as an implementation without them does")
	if err := fs.Parse(args); err != nil {
		return ExitSetup
	}
	if fs.NArg() > 0 {
		return setupError(s, fmt.Errorf("serve-reference takes no arguments, got %q", fs.Args()))
	}
	devs, err := deviation.Parse(mutants...)
	if err != nil {
		return setupError(s, fmt.Errorf("--mutant: %w", err))
	}
	caps := refdriver.Capabilities()
	if !*plain {
		// --reword offers every option too: each event is reworded before
		// it goes to the runner's sink, as its trajectory reports it.
		caps = append(caps, protocol.WireSink, protocol.WireMeasure, protocol.JournalLines)
	}
	id := serveref.Identity{Name: "polyloop-conform-reference", Version: protocol.SuiteVersion, SpecVersion: SpecVersion, Capabilities: caps}
	if err := serveref.Serve(ctx, id, serveref.ServeOptions{Reword: *reword, Deviations: devs}, s.in, s.out); err != nil {
		return setupError(s, err)
	}
	return ExitOK
}
