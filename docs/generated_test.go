package docs_test

import (
	"context"
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/polyloop/polyloop-conform/internal/docgen"
)

var update = flag.Bool("update", false, "rewrite every generated block of README.md and docs/*.md ("+docgen.Command+")")

// TestGeneratedBlocks recomputes every `<!-- generated: NAME -->` block of
// README.md and docs/*.md from its generator (internal/docgen) and fails,
// naming file:line and the one command that refreshes them, when a block
// says something else. The blocks whose generator builds the CLI and runs
// the suite or an exploration over the protocol are a product check:
// recomputed under POLYLOOP_LONG=1 (which .ci/run sets) and by -update,
// otherwise listed as not checked here.
func TestGeneratedBlocks(t *testing.T) {
	runs := *update || os.Getenv("POLYLOOP_LONG") == "1"
	res, err := docgen.Refresh(context.Background(), "..", docgen.Options{Write: *update, Runs: runs})
	if err != nil {
		t.Fatal(err)
	}
	if !runs {
		t.Logf("not recomputed (they run the CLI over the protocol; POLYLOOP_LONG=1 or -update does): %s", strings.Join(res.Unchecked, ", "))
	}
	if *update {
		for _, s := range res.Stale {
			t.Logf("rewrote %s:%d (%s)", s.File, s.Line, s.Name)
		}
		return
	}
	for _, s := range res.Stale {
		t.Error(s)
	}
}
