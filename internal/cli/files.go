package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/polyloop/polyloop-conform/internal/compare"
	"github.com/polyloop/polyloop-conform/internal/expect"
	"github.com/polyloop/polyloop-conform/internal/jsontext"
	"github.com/polyloop/polyloop-conform/internal/schema"
	"github.com/polyloop/polyloop-conform/scenarios"
	"github.com/polyloop/polyloop-conform/trajectories"
)

func validateCmd(_ context.Context, args []string, s stdio) int {
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	fs.SetOutput(s.err)
	if err := fs.Parse(args); err != nil {
		return ExitSetup
	}
	if fs.NArg() == 0 {
		return setupError(s, errors.New("validate needs files: polyloop-conform validate scenarios/*.yaml trajectories/*.json"))
	}
	bad := 0
	for _, name := range fs.Args() {
		data, err := os.ReadFile(name)
		if err != nil {
			return setupError(s, err)
		}
		switch {
		case strings.HasSuffix(name, ".schema.json"):
			// The schemas sit beside the files they describe, so a glob
			// picks them up: check that they compile instead.
			if _, err = schema.Compile(name, data); err == nil {
				fmt.Fprintf(s.out, "%s: ok (a JSON Schema)\n", name)
				continue
			}
		case strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml"):
			_, err = scenarios.Parse(name, data)
		case strings.HasSuffix(name, ".json"):
			_, _, err = trajectories.Parse(name, data)
		default:
			err = fmt.Errorf("%s: cannot tell whether this is a scenario (.yaml) or a trajectory (.json)", name)
		}
		if err != nil {
			bad++
			fmt.Fprintln(s.out, err)
			continue
		}
		fmt.Fprintf(s.out, "%s: ok\n", name)
	}
	if bad > 0 {
		fmt.Fprintf(s.out, "%d of %d files invalid\n", bad, fs.NArg())
		return ExitFail
	}
	return ExitOK
}

// ignoreFlag collects repeated --ignore patterns.
type ignoreFlag []string

func (f *ignoreFlag) String() string     { return strings.Join(*f, ",") }
func (f *ignoreFlag) Set(v string) error { *f = append(*f, v); return nil }

func readIgnoreFile(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--ignore-file: %w", err)
	}
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		line, _, _ = strings.Cut(line, "#")
		if line = strings.TrimSpace(line); line != "" {
			out = append(out, line)
		}
	}
	return out, nil
}

func loadTrajectory(name string) (any, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	_, doc, err := trajectories.Parse(name, data)
	return doc, err
}

func printDiffs(s stdio, asJSON bool, diffs []compare.Difference) error {
	if asJSON {
		if diffs == nil {
			diffs = []compare.Difference{}
		}
		return jsontext.NewEncoder(s.out, "  ").Encode(diffs)
	}
	for _, d := range diffs {
		fmt.Fprintf(s.out, "  %s\n", d)
	}
	return nil
}

func diffCmd(_ context.Context, args []string, s stdio) int {
	fs := flag.NewFlagSet("diff", flag.ContinueOnError)
	fs.SetOutput(s.err)
	var ignore ignoreFlag
	fs.Var(&ignore, "ignore", "leave out fields matching `PATH` (repeatable; steps[*].context_size, events.*)")
	var format listFormat
	format.register(fs, "json prints the differences for tools")
	strict := fs.Bool("strict", false, strictUsage)
	if err := fs.Parse(args); err != nil {
		return ExitSetup
	}
	if fs.NArg() != 2 {
		return setupError(s, errors.New("diff needs two trajectory files: polyloop-conform diff BEFORE.json AFTER.json"))
	}
	a, err := loadTrajectory(fs.Arg(0))
	if err != nil {
		return setupError(s, err)
	}
	b, err := loadTrajectory(fs.Arg(1))
	if err != nil {
		return setupError(s, err)
	}
	m, err := ignoreMatcher(ignore)
	if err != nil {
		return setupError(s, err)
	}
	opts, err := diffOptions(a, ignore, *strict)
	if err != nil {
		return setupError(s, err)
	}
	diffs, err := compare.Diff(a, b, opts)
	if err != nil {
		return setupError(s, err)
	}
	if !format.json() {
		fmt.Fprintf(s.out, "%s → %s: %d differences\n", fs.Arg(0), fs.Arg(1), len(diffs))
		counts, _ := ignoredFields(m, nil, a)
		printIgnored(s, counts)
	}
	if err := printDiffs(s, format.json(), diffs); err != nil {
		return setupError(s, err)
	}
	if len(diffs) > 0 {
		return ExitFail
	}
	return ExitOK
}

// ignoreMatcher compiles --ignore patterns and refuses one that matches no
// field of the trajectory format: a typo must not silently ignore nothing.
func ignoreMatcher(pats []string) (*compare.Matcher, error) {
	m, err := compare.NewMatcher(pats)
	if err != nil {
		return nil, err
	}
	fields, err := trajectories.Fields()
	if err != nil {
		return nil, err
	}
	for _, p := range m.Patterns() {
		one, err := compare.NewMatcher([]string{p})
		if err != nil {
			return nil, err
		}
		found := false
		for _, f := range fields {
			sample := strings.ReplaceAll(f.Path, "[*]", "[0]")
			if _, ok := one.Match(sample); ok {
				found = true
				break
			}
			if _, ok := one.Match(sample + ".x"); ok {
				found = true
				break
			}
		}
		if !found {
			return nil, fmt.Errorf("--ignore %q matches no field of %s; docs/trajectory-format.md lists the fields (use [*] for any position, a trailing .* for everything below)", p, trajectories.Format)
		}
	}
	return m, nil
}

// ignoredFields counts, per pattern, the golden's fields an ignore list
// leaves out, and reports the first one a MUST expectation of sc reads.
func ignoredFields(m *compare.Matcher, sc *scenarios.Scenario, want any) (counts map[string]int, mustHidden string) {
	counts = map[string]int{}
	var checked []string
	if sc != nil && sc.Level == "MUST" {
		checked = expect.Paths(sc, want)
	}
	for _, c := range checked {
		// A list's length is hidden only when the list itself is ignored.
		if list, ok := strings.CutSuffix(c, "[#]"); ok {
			if _, hid := m.Covers(list); hid && mustHidden == "" {
				mustHidden = list
			}
		}
	}
	for _, leaf := range compare.Leaves(want) {
		pat, ok := m.Covers(leaf)
		if !ok {
			continue
		}
		counts[pat]++
		for _, c := range checked {
			if mustHidden == "" && (leaf == c || strings.HasPrefix(leaf, c+".") || strings.HasPrefix(leaf, c+"[")) {
				mustHidden = leaf
			}
		}
	}
	return counts, mustHidden
}

func printIgnored(s stdio, counts map[string]int) {
	pats := make([]string, 0, len(counts))
	for p := range counts {
		pats = append(pats, p)
	}
	sort.Strings(pats)
	for _, p := range pats {
		fmt.Fprintf(s.out, "  ignored %d fields matching %s\n", counts[p], p)
	}
}

const strictUsage = "compare implementation text (executor sentences, parse errors, error messages) word for word; by default it is checked only by the text rule (docs/trajectory-format.md)"

// diffOptions compares by the trajectory format's classes, resolved
// against want; strict compares text word for word too (compare.Verbatim).
func diffOptions(want any, ignore []string, strict bool) (compare.Options, error) {
	o := compare.Options{Ignore: ignore}
	class, err := trajectories.Classifier(want)
	if err != nil {
		return o, err
	}
	o.Class = class
	if strict {
		o.TextEqual = compare.Verbatim
	}
	return o, nil
}

func expandJSON(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			out = append(out, a)
			continue
		}
		matches, err := filepath.Glob(filepath.Join(a, "*.json"))
		if err != nil {
			return nil, err
		}
		for _, m := range matches {
			if filepath.Base(m) != trajectories.SchemaFile {
				out = append(out, m)
			}
		}
	}
	sort.Strings(out)
	if len(out) == 0 {
		return nil, fmt.Errorf("no trajectory files in %s", strings.Join(args, " "))
	}
	return out, nil
}
