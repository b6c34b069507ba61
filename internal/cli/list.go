package cli

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/polyloop/polyloop-conform/internal/jsontext"
)

func listCmd(_ context.Context, args []string, s stdio) int {
	fs := flag.NewFlagSet("list", flag.ContinueOnError)
	fs.SetOutput(s.err)
	var src sources
	src.register(fs)
	var format listFormat
	format.register(fs, "json prints id, title, level, decisions and requires for tools")
	pattern := fs.String("run", "", "only scenarios whose id matches one of these comma-separated `GLOB`s")
	if err := fs.Parse(args); err != nil {
		return ExitSetup
	}
	all, _, err := src.load()
	if err != nil {
		return setupError(s, err)
	}
	scs, err := selectScenarios(all, *pattern)
	if err != nil {
		return setupError(s, err)
	}
	if format.json() {
		type entry struct {
			ID        string   `json:"id"`
			Title     string   `json:"title"`
			Level     string   `json:"level"`
			Decisions []string `json:"decisions"`
			Requires  []string `json:"requires"`
		}
		out := make([]entry, len(scs))
		for i, sc := range scs {
			out[i] = entry{sc.ID, sc.Title, sc.Level, sc.Decisions, sc.Requires}
		}
		if err := jsontext.NewEncoder(s.out, "  ").Encode(out); err != nil {
			return setupError(s, err)
		}
		return ExitOK
	}
	for _, sc := range scs {
		fmt.Fprintf(s.out, "%-48s %-6s %-40s %s\n", sc.ID, sc.Level, strings.Join(sc.Decisions, ","), strings.Join(sc.Requires, ","))
	}
	fmt.Fprintf(s.out, "%d scenarios\n", len(scs))
	return ExitOK
}
