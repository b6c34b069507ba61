package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/polyloop/polyloop-conform/docs/design"
	"github.com/polyloop/polyloop-conform/internal/decisions"
)

func designFS(dir string) (fs.FS, error) {
	if dir == "" {
		return design.FS, nil
	}
	if err := inputDir("design", dir, "*.md"); err != nil {
		return nil, err
	}
	return os.DirFS(dir), nil
}

func coverageCmd(_ context.Context, args []string, s stdio) int {
	fs := flag.NewFlagSet("coverage", flag.ContinueOnError)
	fs.SetOutput(s.err)
	var src sources
	src.register(fs)
	designDir := fs.String("design", "", "read decision records from `DIR` instead of the built-in set")
	format := fs.String("format", "text", "text, json or markdown")
	if err := fs.Parse(args); err != nil {
		return ExitSetup
	}
	dfs, err := designFS(*designDir)
	if err != nil {
		return setupError(s, err)
	}
	set, err := decisions.Load(dfs)
	if err != nil {
		return setupError(s, err)
	}
	scs, _, err := src.load()
	if err != nil {
		return setupError(s, err)
	}
	cov := decisions.Check(set, scs)
	switch *format {
	case "json":
		enc := json.NewEncoder(s.out)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(cov); err != nil {
			return setupError(s, err)
		}
	case "markdown":
		fmt.Fprintln(s.out, "| decision | level | status | scenarios |")
		fmt.Fprintln(s.out, "|---|---|---|---|")
		for _, r := range cov.Rows {
			fmt.Fprintf(s.out, "| `%s` | %s | %s | %s |\n", r.ID, r.Level, r.Status, strings.Join(wrapCode(r.Scenarios), ", "))
		}
		for _, p := range cov.Problems {
			fmt.Fprintf(s.out, "\n- **problem:** %s", p)
		}
		fmt.Fprintln(s.out)
	case "text":
		for _, r := range cov.Rows {
			fmt.Fprintf(s.out, "%-34s %-6s %-10s %3d  %s\n", r.ID, r.Level, r.Status, len(r.Scenarios), strings.Join(r.Scenarios, " "))
		}
		for _, p := range cov.Problems {
			fmt.Fprintf(s.out, "PROBLEM %s\n", p)
		}
		must, covered := 0, 0
		for _, r := range cov.Rows {
			if r.Level == "MUST" && r.Status == "accepted" {
				must++
				if len(r.Scenarios) > 0 {
					covered++
				}
			}
		}
		fmt.Fprintf(s.out, "%d decisions, %d accepted MUST decisions of which %d have scenarios, %d scenarios, %d problems\n", len(cov.Rows), must, covered, len(scs), len(cov.Problems))
	default:
		return setupError(s, fmt.Errorf("--format %q: choose text, json or markdown", *format))
	}
	if len(cov.Problems) > 0 {
		return ExitFail
	}
	return ExitOK
}

func wrapCode(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = "`" + s + "`"
	}
	return out
}
