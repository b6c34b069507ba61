// Package cli implements the polyloop-conform command. Main has the shape
// Main(ctx, args, stdin, stdout, stderr) so tests run it in process and
// serve-reference runs the same code as a real subprocess.
package cli

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
)

// Exit codes: 0 all passed, 1 something ran and failed, 2 nothing could be
// judged (usage or set-up error).
const (
	ExitOK    = 0
	ExitFail  = 1
	ExitSetup = 2
)

type command struct {
	summary string
	run     func(ctx context.Context, args []string, io stdio) int
}

type stdio struct {
	in       io.Reader
	out, err io.Writer
}

func commands() map[string]command {
	return map[string]command{
		"run":             {"run the scenarios against an implementation and report", runCmd},
		"list":            {"list scenarios with their decisions, level and requirements", listCmd},
		"validate":        {"check scenario or trajectory files against their schemas", validateCmd},
		"diff":            {"field-by-field diff of two trajectories", diffCmd},
		"verify":          {"check recorded trajectories against the goldens", verifyCmd},
		"explore":         {"kill an implementation at every journal write point, resume it, and judge each resume", exploreCmd},
		"selfcheck":       {"run the suite against named deviations of the reference; fails when one goes unnoticed", selfcheckCmd},
		"generate":        {"compare an implementation with the reference on generated scenarios; shrink and save each difference", generateCmd},
		"serve-reference": {"serve the reference kernel over the stdio protocol (an implementation for --impl)", serveCmd},
		"gate":            {"refuse golden and decision changes that do not explain each other; check the upstream lock", gateCmd},
		"pin":             {"record hashes of the upstream design decisions in the lock file", pinCmd},
		"coverage":        {"the decision × scenario matrix; fails on uncovered MUST decisions or bad citations", coverageCmd},
		"merge":           {"join the JSON reports of the shards of one run into one report", mergeCmd},
		"show":            {"one scenario on one page: spec, expect, the decisions it cites with their text, its golden", showCmd},
		"version":         {"print the suite's version; --since V lists the decisions and scenarios that moved since V", versionCmd},
	}
}

// Main runs the command line and returns the process exit code.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	s := stdio{in: stdin, out: stdout, err: stderr}
	cmds := commands()
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(stdout, cmds)
		if len(args) == 0 {
			return ExitSetup
		}
		return ExitOK
	}
	c, ok := cmds[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "polyloop-conform: unknown command %q\n\n", args[0])
		usage(stderr, cmds)
		return ExitSetup
	}
	return c.run(ctx, args[1:], s)
}

func usage(w io.Writer, cmds map[string]command) {
	fmt.Fprintln(w, "usage: polyloop-conform <command> [flags]")
	fmt.Fprintln(w)
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-16s %s\n", n, cmds[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'polyloop-conform <command> -h' for a command's flags.")
}

// setupError prints err and returns ExitSetup.
func setupError(s stdio, err error) int {
	msg := err.Error()
	if !strings.HasPrefix(msg, "polyloop-conform") {
		msg = "polyloop-conform: " + msg
	}
	fmt.Fprintln(s.err, msg)
	return ExitSetup
}
