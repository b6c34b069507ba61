package cli

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/polyloop/polyloop-conform/internal/report"
)

// mergeCmd joins the JSON reports of the shards of one run (run, explore
// or selfcheck with --shard K/N) into one report in any format.
func mergeCmd(_ context.Context, args []string, s stdio) int {
	fs := flag.NewFlagSet("merge", flag.ContinueOnError)
	fs.SetOutput(s.err)
	var out reportFlags
	out.register(fs, false)
	if err := fs.Parse(args); err != nil {
		return ExitSetup
	}
	if fs.NArg() == 0 {
		return setupError(s, fmt.Errorf("merge takes the shards' JSON reports: polyloop-conform merge [--format F] [--out FILE] shard-1.json shard-2.json …"))
	}
	if err := out.check(); err != nil {
		return setupError(s, err)
	}
	var reps []*report.Report
	for _, name := range fs.Args() {
		data, err := os.ReadFile(name)
		if err != nil {
			return setupError(s, err)
		}
		r, err := report.ReadJSON(name, data)
		if err != nil {
			return setupError(s, err)
		}
		reps = append(reps, r)
	}
	merged, err := report.Merge(reps)
	if err != nil {
		return setupError(s, err)
	}
	merged.RequireEvidence()
	if err := out.emit(s, merged, ""); err != nil {
		return setupError(s, err)
	}
	if !merged.OK() {
		return ExitFail
	}
	return ExitOK
}
