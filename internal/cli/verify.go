package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/polyloop/polyloop-conform/internal/compare"
	"github.com/polyloop/polyloop-conform/internal/expect"
	"github.com/polyloop/polyloop-conform/internal/record"
	"github.com/polyloop/polyloop-conform/scenarios"
	"github.com/polyloop/polyloop-conform/trajectories"
)

// verifier checks recorded trajectories, one file at a time, against the
// goldens and the scenarios' expect blocks, and counts the verdicts.
type verifier struct {
	s          stdio
	byID       map[string]*scenarios.Scenario
	goldens    map[string][]byte
	want       map[string]bool // the scenarios --run selected
	manifests  map[string]record.Manifest
	m          *compare.Matcher
	ignore     []string
	strict     bool
	ignoreMust bool

	seen           map[string]string // scenario ID → the file holding it
	passed, failed int
	// interrupted counts the files a signal stopped while they were read
	// (a FIFO, a hung network file system): neither passed nor failed.
	interrupted int
}

// verifyCmd verifies recorded trajectory files. A signal stops it between
// files or while one is read: the file being read is interrupted, the
// rest not run, no selected scenario is called missing, and the summary
// says INTERRUPTED (exit 130 or 143 through Exec).
func verifyCmd(ctx context.Context, args []string, s stdio) int {
	fs := flag.NewFlagSet("verify", flag.ContinueOnError)
	fs.SetOutput(s.err)
	var src sources
	src.register(fs)
	v := &verifier{s: s, seen: map[string]string{}}
	var ignore ignoreFlag
	fs.Var(&ignore, "ignore", "leave out fields matching `PATH` that your implementation cannot reproduce (repeatable)")
	ignoreFile := fs.String("ignore-file", "", "read ignore patterns from `FILE`, one per line, # comments")
	fs.BoolVar(&v.strict, "strict", false, strictUsage)
	fs.BoolVar(&v.ignoreMust, "ignore-must", false, "allow --ignore to leave out fields that a MUST scenario's expect block checks")
	pattern := fs.String("run", "", "verify only scenarios whose id matches one of these comma-separated `GLOB`s; the files must hold every selected one")
	if err := fs.Parse(args); err != nil {
		return ExitSetup
	}
	if fs.NArg() == 0 {
		return setupError(s, errors.New("verify needs trajectory files or directories: polyloop-conform verify recorded/"))
	}
	if *ignoreFile != "" {
		more, err := readIgnoreFile(*ignoreFile)
		if err != nil {
			return setupError(s, err)
		}
		ignore = append(ignore, more...)
	}
	v.ignore = ignore
	selected, files, err := v.load(src, *pattern, fs.Args())
	if err != nil {
		return setupError(s, err)
	}
	notRun := 0
	for i, f := range files {
		if ctx.Err() != nil {
			notRun = len(files) - i
			break
		}
		if err := v.file(ctx, f); err != nil {
			return setupError(s, err)
		}
	}
	if ctx.Err() != nil {
		fmt.Fprintf(s.out, "\nINTERRUPTED: stopped by a signal; %d files were not verified\n", notRun)
		fmt.Fprintf(s.out, "%d passed, %d failed, %d interrupted, %d not run (stopped by a signal)\n", v.passed, v.failed, v.interrupted, notRun)
		return ExitFail // Exec turns it into 130 or 143
	}
	for _, sc := range selected {
		if v.seen[sc.ID] == "" {
			v.fail("%s\n  missing: no trajectory of this scenario was given; record it, or narrow the check with --run", sc.ID)
		}
	}
	fmt.Fprintf(s.out, "%d passed, %d failed\n", v.passed, v.failed)
	if v.failed > 0 {
		return ExitFail
	}
	return ExitOK
}

// load reads the scenarios, the goldens, the ignore patterns and the
// recordings' manifests; it returns the scenarios --run selected and the
// trajectory files among args.
func (v *verifier) load(src sources, pattern string, args []string) (selected []*scenarios.Scenario, files []string, err error) {
	scs, goldens, err := src.load()
	if err != nil {
		return nil, nil, err
	}
	v.goldens = goldens
	if v.m, err = ignoreMatcher(v.ignore); err != nil {
		return nil, nil, err
	}
	v.byID = map[string]*scenarios.Scenario{}
	for _, sc := range scs {
		v.byID[sc.ID] = sc
	}
	if files, err = expandJSON(args); err != nil {
		return nil, nil, err
	}
	if selected, err = selectScenarios(scs, pattern); err != nil {
		return nil, nil, err
	}
	v.want = map[string]bool{}
	for _, sc := range selected {
		v.want[sc.ID] = true
	}
	v.manifests = map[string]record.Manifest{}
	for _, a := range args {
		if st, err := os.Stat(a); err == nil && st.IsDir() {
			m, ok, err := record.Read(a)
			if err != nil {
				return nil, nil, err
			}
			if ok {
				v.manifests[filepath.Clean(a)] = m
			}
		}
	}
	return selected, files, nil
}

func (v *verifier) fail(format string, args ...any) {
	v.failed++
	fmt.Fprintf(v.s.out, "FAIL "+format+"\n", args...)
}

// file verifies one trajectory file; an error is the run's (exit 2), a
// verdict is printed and counted.
func (v *verifier) file(ctx context.Context, f string) error {
	got, err := readTrajectory(ctx, f)
	if ctx.Err() != nil {
		v.interrupted++
		fmt.Fprintf(v.s.out, "INTERRUPTED %s: stopped by a signal before it was read\n", f)
		return nil
	}
	if err != nil {
		v.fail("%s\n  %s", f, strings.ReplaceAll(err.Error(), "\n", "\n  "))
		return nil
	}
	id, _, _ := compare.Lookup(got, "scenario")
	name, _ := id.(string)
	if !v.admitted(f, name) {
		return nil
	}
	gdata, ok := v.goldens[name]
	if !ok {
		v.fail("%s\n  scenario %q has no golden; is the file from another suite version?", f, name)
		return nil
	}
	_, wantDoc, err := trajectories.Parse("golden "+name, gdata)
	if err != nil {
		return err
	}
	counts, hidden := ignoredFields(v.m, v.byID[name], wantDoc)
	if hidden != "" && !v.ignoreMust {
		return fmt.Errorf("--ignore would leave out %s of %s, which that MUST scenario's expect block checks; fix the implementation, or add --ignore-must to accept not checking it", hidden, name)
	}
	opts, err := diffOptions(wantDoc, v.ignore, v.strict)
	if err != nil {
		return err
	}
	diffs, err := compare.Diff(wantDoc, got, opts)
	if err != nil {
		return err
	}
	broken := v.expected(name, got)
	if len(diffs) == 0 && len(broken) == 0 {
		v.passed++
		fmt.Fprintf(v.s.out, "ok   %s (%s)\n", f, name)
		printIgnored(v.s, counts)
		return nil
	}
	v.fail("%s (%s): %d differences from the golden, %d from the scenario's expect", f, name, len(diffs), len(broken))
	printIgnored(v.s, counts)
	for _, b := range broken {
		fmt.Fprintf(v.s.out, "  %s\n", b)
	}
	_ = printDiffs(v.s, false, diffs)
	return nil
}

// admitted reports whether file f, holding scenario name's trajectory, is
// one to verify: named for its scenario, the only one of it, selected, and
// written by the recording beside it. It prints why not.
func (v *verifier) admitted(f, name string) bool {
	if base := strings.TrimSuffix(filepath.Base(f), ".json"); base != name {
		v.fail("%s\n  the file is named for %s but holds the trajectory of %q: a trajectory filed under another scenario's name proves nothing about that scenario", f, base, name)
		return false
	}
	if other, dup := v.seen[name]; dup {
		v.fail("%s\n  a second trajectory for %s (the first is %s)", f, name, other)
		return false
	}
	v.seen[name] = f
	if v.byID[name] != nil && !v.want[name] {
		fmt.Fprintf(v.s.out, "skip %s (%s): not selected by --run\n", f, name)
		return false
	}
	if m, ok := v.manifests[filepath.Dir(filepath.Clean(f))]; ok && !m.Has(name) {
		v.fail("%s\n  stale: the recording of %s (%s) did not write it; an earlier run left it. Delete it, or record again", f, m.RecordedAt.Format(time.RFC3339), m.Implementation)
		return false
	}
	return true
}

// expected is the scenario's own oracle, as run applies it: a recording
// that matches a golden the design contradicts is still wrong.
func (v *verifier) expected(name string, got any) []string {
	sc := v.byID[name]
	if sc == nil {
		return nil
	}
	var broken []string
	for _, e := range expect.Check(sc, got) {
		if _, hide := v.m.Match(e.Path); hide && e.Path != "" {
			continue
		}
		broken = append(broken, "expect: "+e.String()+" ("+strings.Join(sc.Decisions, ", ")+")")
	}
	return broken
}

// readTrajectory is loadTrajectory unless ctx ends first: a read can block
// (a FIFO, a hung network file system) where no signal reaches it. The
// abandoned read ends with the process.
func readTrajectory(ctx context.Context, f string) (any, error) {
	type loaded struct {
		doc any
		err error
	}
	done := make(chan loaded, 1)
	go func() {
		doc, err := loadTrajectory(f)
		done <- loaded{doc, err}
	}()
	select {
	case l := <-done:
		return l.doc, l.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
