package cli

import (
	"context"
	"flag"
	"fmt"

	"github.com/polyloop/polyloop-conform/docs"
	"github.com/polyloop/polyloop-conform/internal/protocol"
	"github.com/polyloop/polyloop-conform/internal/suiteversion"
)

// sinceChanges is what moved from suite version v (run --since v) to the
// suite built into this binary: its scenarios, goldens and decision
// records hashed now, against docs/versions/<v>.json.
func sinceChanges(v string) (*suiteversion.Changes, error) {
	ms, err := suiteversion.Load(docs.Versions())
	if err != nil {
		return nil, err
	}
	old, err := suiteversion.Find(ms, v)
	if err != nil {
		return nil, fmt.Errorf("--since: %w", err)
	}
	cur, err := suiteversion.Compute(suiteversion.Embedded(protocol.Version))
	if err != nil {
		return nil, err
	}
	cur.Version = protocol.SuiteVersion
	c := suiteversion.Diff(old, cur)
	return &c, nil
}

// versionCmd prints the suite's version and, with --since V, what moved
// since V in the changelog's words (docs/versioning.md).
func versionCmd(_ context.Context, args []string, s stdio) int {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	fs.SetOutput(s.err)
	since := fs.String("since", "", "list the decisions and scenarios new, changed or removed since suite `VERSION`")
	if err := fs.Parse(args); err != nil {
		return ExitSetup
	}
	if fs.NArg() > 0 {
		return setupError(s, fmt.Errorf("version takes no arguments, got %q", fs.Args()))
	}
	fmt.Fprintf(s.out, "polyloop-conform suite %s (protocol %d)\n", protocol.SuiteVersion, protocol.Version)
	if *since == "" {
		return ExitOK
	}
	c, err := sinceChanges(*since)
	if err != nil {
		return setupError(s, err)
	}
	fmt.Fprintf(s.out, "\nSince %s:\n\n%s", *since, suiteversion.Entry(*c))
	return ExitOK
}
