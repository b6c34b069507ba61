package docs_test

import (
	"context"
	"flag"
	"testing"

	"github.com/polyloop/polyloop-conform/internal/docgen"
)

var update = flag.Bool("update", false, "rewrite every generated block of README.md and docs/*.md ("+docgen.Command+")")

// TestGeneratedBlocks recomputes every `<!-- generated: NAME -->` block of
// README.md and docs/*.md from its generator (internal/docgen) and fails,
// naming file:line and the one command that refreshes them, when a block
// says something else. It builds the CLI and runs the suite and an
// exploration over the protocol, so -short skips it.
func TestGeneratedBlocks(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the whole suite over the protocol; without -short it checks every generated block")
	}
	stale, err := docgen.Refresh(context.Background(), "..", *update)
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		for _, s := range stale {
			t.Logf("rewrote %s:%d (%s)", s.File, s.Line, s.Name)
		}
		return
	}
	for _, s := range stale {
		t.Error(s)
	}
}
