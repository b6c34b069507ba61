package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/polyloop/polyloop-conform/internal/generate"
	"github.com/polyloop/polyloop-conform/internal/refdriver"
	"github.com/polyloop/polyloop-conform/reference/tools"
)

// generateCmd compares an implementation with the reference on scenarios
// generated from a seed, and writes each difference, shrunk, as a
// scenario with the reference's trajectory.
func generateCmd(ctx context.Context, args []string, s stdio) int {
	fs := flag.NewFlagSet("generate", flag.ContinueOnError)
	fs.SetOutput(s.err)
	impl := fs.String("impl", "", "the implementation to compare with the reference, as a shell `CMD` speaking the protocol (required)")
	seed := fs.Uint64("seed", 1, "the seed: the same seed gives the same cases")
	count := fs.Int("count", 0, "stop after `N` cases (default 1000 when --seconds is not given)")
	seconds := fs.Int("seconds", 0, "stop after `S` seconds")
	out := fs.String("out", "generated", "write each shrunk difference to `DIR` as <id>.yaml and <id>.json")
	timeout := fs.Duration("timeout", 10*time.Second, "time limit for one run of one case")
	first := fs.Bool("first", false, "stop at the first difference")
	if err := fs.Parse(args); err != nil {
		return ExitSetup
	}
	if err := checkImplFlag(fs); err != nil {
		return setupError(s, err)
	}
	if *impl == "" {
		return setupError(s, fmt.Errorf("generate needs --impl CMD, the implementation to compare with the reference (try --impl \"polyloop-conform serve-reference\")"))
	}
	if *count < 0 || *seconds < 0 {
		return setupError(s, fmt.Errorf("--count and --seconds must not be negative"))
	}
	if *count == 0 && *seconds == 0 {
		*count = 1000
	}
	d, closeDriver, err := newDriver(ctx, driverConfig{impl: *impl, logs: io.Discard})
	if err != nil {
		return setupError(s, err)
	}
	defer closeDriver()
	o := generate.Options{
		Reference: refdriver.Driver{Schemas: &tools.SchemaCache{}}, Impl: d,
		Seed: *seed, Count: *count, Out: *out, Timeout: *timeout, Stop: *first,
		Progress: func(sum generate.Summary) {
			fmt.Fprintf(s.err, "\r%d cases, %d differences", sum.Cases, len(sum.Found))
		},
	}
	if *seconds > 0 {
		o.Until = time.Now().Add(time.Duration(*seconds) * time.Second)
	}
	start := time.Now()
	sum, err := generate.Run(ctx, o)
	fmt.Fprintln(s.err)
	if err != nil && ctx.Err() == nil {
		return setupError(s, err)
	}
	elapsed := time.Since(start)
	for _, f := range sum.Found {
		fmt.Fprintf(s.out, "DIFFERENCE case %d → %s (%d steps, %d tools), decisions %s\n", f.Case, f.ID, f.Steps, f.Tools, strings.Join(f.Decisions, ", "))
		for i, p := range f.Problems {
			if i == 3 {
				fmt.Fprintf(s.out, "  … %d more\n", len(f.Problems)-3)
				break
			}
			fmt.Fprintf(s.out, "  %s\n", p)
		}
		if f.File != "" {
			fmt.Fprintf(s.out, "  saved: %s (and .json); rerun: polyloop-conform run --impl %q --scenarios %s --goldens %s --run %s\n", f.File, *impl, *out, *out, f.ID)
		}
	}
	fmt.Fprintf(s.out, "seed %d: %d cases (%.0f/s), %d discarded, %d skipped, %d differences, %d shrink steps\n",
		*seed, sum.Cases, float64(sum.Cases)/max(elapsed.Seconds(), 1e-9), sum.Discarded, sum.Skipped, len(sum.Found), sum.Shrinks)
	if ctx.Err() != nil {
		return ExitFail // the signal handler turns it into 130 or 143
	}
	if len(sum.Found) > 0 {
		return ExitFail
	}
	return ExitOK
}
