package cli

import (
	"context"
	"flag"

	"github.com/polyloop/polyloop-conform/internal/protocol"
	"github.com/polyloop/polyloop-conform/internal/refdriver"
)

// SpecVersion names the design docs the reference implements.
const SpecVersion = "polyloop-design-2026-08 (0002 0003 0004 0006 0007 0008 0010)"

func serveCmd(ctx context.Context, args []string, s stdio) int {
	fs := flag.NewFlagSet("serve-reference", flag.ContinueOnError)
	fs.SetOutput(s.err)
	if err := fs.Parse(args); err != nil {
		return ExitSetup
	}
	id := protocol.Identity{Name: "polyloop-conform-reference", Version: protocol.SuiteVersion, SpecVersion: SpecVersion, Capabilities: refdriver.Capabilities()}
	if err := protocol.Serve(ctx, id, s.in, s.out); err != nil {
		return setupError(s, err)
	}
	return ExitOK
}
