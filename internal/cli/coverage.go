package cli

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/polyloop/polyloop-conform/docs/design"
	"github.com/polyloop/polyloop-conform/internal/atomicfile"
	"github.com/polyloop/polyloop-conform/internal/decisions"
	"github.com/polyloop/polyloop-conform/internal/deviation"
	"github.com/polyloop/polyloop-conform/internal/killmatrix"
	"github.com/polyloop/polyloop-conform/internal/report"
)

// loadDecisions reads the decision records of dir, or the built-in set
// when dir is empty.
func loadDecisions(dir string) (*decisions.Set, error) {
	dfs, err := designFS(dir)
	if err != nil {
		return nil, err
	}
	return decisions.Load(dfs)
}

func designFS(dir string) (fs.FS, error) {
	if dir == "" {
		return design.FS, nil
	}
	if err := inputDir("design", dir, "*.md"); err != nil {
		return nil, err
	}
	return os.DirFS(dir), nil
}

func coverageCmd(ctx context.Context, args []string, s stdio) int {
	fs := flag.NewFlagSet("coverage", flag.ContinueOnError)
	fs.SetOutput(s.err)
	var src sources
	src.register(fs)
	designDir := fs.String("design", "", "read decision records from `DIR` instead of the built-in set")
	format := fs.String("format", "text", report.CoverageUsage())
	out := fs.String("out", "", "write the matrix to `FILE` instead of standard output (atomically)")
	devs := fs.Bool("deviations", false, "add the decision × deviation view: run selfcheck in process and show which scenarios catch each deviation")
	if err := fs.Parse(args); err != nil {
		return ExitSetup
	}
	write, err := report.LookupCoverage(*format)
	if err != nil {
		return setupError(s, err)
	}
	if *out != "" {
		if err := atomicfile.CheckOutput(*out); err != nil {
			return setupError(s, fmt.Errorf("--out: %w", err))
		}
	}
	set, err := loadDecisions(*designDir)
	if err != nil {
		return setupError(s, err)
	}
	scs, goldens, err := src.load()
	if err != nil {
		return setupError(s, err)
	}
	cov := decisions.Check(set, scs)
	// The deviations of the reference are always listed against the
	// decisions they break; --deviations also runs them to say which
	// scenarios catch each.
	all := deviation.All()
	var m *killmatrix.Matrix
	if *devs {
		k := killer{scs: scs, goldens: goldens, timeout: 10 * time.Second, logs: s.err}
		if m, err = killmatrix.Build(ctx, all, 2, k.failures); err != nil {
			return setupError(s, err)
		}
		if ctx.Err() != nil {
			// Deviations a signal stopped are neither caught nor missed.
			fmt.Fprintln(s.err, "coverage: stopped by a signal before every deviation ran; no matrix written")
			return ExitFail
		}
	}
	ds := make([]decisions.Deviation, len(all))
	for i, d := range all {
		ds[i] = decisions.Deviation{Name: string(d.Name), Decision: d.Decision}
		if m != nil {
			ds[i].CaughtBy = m.CaughtBy(i)
		}
	}
	cov.AddDeviations(ds, *devs)
	var buf bytes.Buffer
	if err := write(&buf, cov); err != nil {
		return setupError(s, err)
	}
	if *out == "" {
		s.out.Write(buf.Bytes())
	} else {
		if err := atomicfile.Output(*out, buf.Bytes()); err != nil {
			return setupError(s, err)
		}
		must, covered := cov.MustCovered()
		fmt.Fprintf(s.out, "%d decisions, %d of %d accepted MUST decisions have scenarios, %d problems (matrix in %s)\n", len(cov.Rows), covered, must, len(cov.Problems), *out)
	}
	if len(cov.Problems) > 0 {
		return ExitFail
	}
	return ExitOK
}
