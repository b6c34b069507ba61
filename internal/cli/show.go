package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/polyloop/polyloop-conform/scenarios"
	"github.com/polyloop/polyloop-conform/trajectories"
)

// showCmd prints one scenario on one page: what it is, the decisions it
// cites with their text, its file (spec and expect), and its golden step
// by step and in full.
func showCmd(_ context.Context, args []string, s stdio) int {
	fset := flag.NewFlagSet("show", flag.ContinueOnError)
	fset.SetOutput(s.err)
	var src sources
	src.register(fset)
	designDir := fset.String("design", "", "read decision records from `DIR` instead of the built-in set")
	if err := fset.Parse(args); err != nil {
		return ExitSetup
	}
	if fset.NArg() != 1 {
		return setupError(s, fmt.Errorf("show takes one scenario id, e.g. polyloop-conform show resume.safe-replayed ('polyloop-conform list' shows the ids)"))
	}
	id := fset.Arg(0)
	all, goldens, err := src.load()
	if err != nil {
		return setupError(s, err)
	}
	var sc *scenarios.Scenario
	var near []string
	for _, c := range all {
		if c.ID == id {
			sc = c
		}
		if scenarios.Family(c.ID) == scenarios.Family(id) || strings.Contains(c.ID, id) {
			near = append(near, c.ID)
		}
	}
	if sc == nil {
		hint := "'polyloop-conform list' shows the ids"
		if len(near) > 0 && len(near) <= 12 {
			hint = "did you mean " + strings.Join(near, ", ") + "?"
		}
		return setupError(s, fmt.Errorf("no scenario %q; %s", id, hint))
	}
	set, err := loadDecisions(*designDir)
	if err != nil {
		return setupError(s, err)
	}
	w := &bytes.Buffer{}
	rule := strings.Repeat("─", 72)
	fmt.Fprintf(w, "%s\n%s\n\n", sc.ID, sc.Title)
	fmt.Fprintf(w, "level %s · requires %s · family %s\n", sc.Level, strings.Join(sc.Requires, ", "), scenarios.Family(sc.ID))
	if sc.Description != "" {
		fmt.Fprintf(w, "\n%s\n", strings.TrimSpace(sc.Description))
	}
	fmt.Fprintf(w, "\n%s\nDecisions it cites\n%s\n", rule, rule)
	for _, d := range sc.Decisions {
		rec, ok := set.ByID[d]
		if !ok {
			fmt.Fprintf(w, "\n%s — not in docs/design (coverage reports this)\n", d)
			continue
		}
		fmt.Fprintf(w, "\n%s — %s  [%s, %s, %s:%d]\n", d, rec.Title, rec.Level, rec.Status, rec.File, rec.Line)
		for _, line := range strings.Split(rec.Body(), "\n") {
			fmt.Fprintf(w, "  %s\n", line)
		}
	}
	fmt.Fprintf(w, "\n%s\nScenario file (the spec and its expect block)\n%s\n\n", rule, rule)
	file := sc.ID + ".yaml"
	var raw []byte
	if src.scenarioDir != "" {
		raw, err = os.ReadFile(filepath.Join(src.scenarioDir, file))
	} else {
		raw, err = fs.ReadFile(scenarios.Embedded(), file)
	}
	if err != nil {
		fmt.Fprintf(w, "(cannot read %s: %v)\n", file, err)
	}
	w.Write(raw)
	fmt.Fprintf(w, "\n%s\nGolden trajectory\n%s\n", rule, rule)
	golden, ok := goldens[sc.ID]
	if !ok {
		fmt.Fprintf(w, "\nno golden; generate it with go test ./conformance -args -update and review it\n")
	} else {
		writeGoldenSteps(w, golden)
		var pretty bytes.Buffer
		if json.Indent(&pretty, golden, "", "  ") == nil {
			fmt.Fprintf(w, "\n%s\n", strings.TrimSpace(pretty.String()))
		}
	}
	if _, err := s.out.Write(w.Bytes()); err != nil {
		return setupError(s, err)
	}
	return ExitOK
}

// writeGoldenSteps prints one line per step and how the run ended.
func writeGoldenSteps(w *bytes.Buffer, golden []byte) {
	tr, _, err := trajectories.Parse("golden", golden)
	if err != nil {
		fmt.Fprintf(w, "\nthe golden does not parse: %v\n", err)
		return
	}
	fmt.Fprintln(w)
	if tr.AssemblyError != nil {
		fmt.Fprintf(w, "refused before any model call: %s %v\n", tr.AssemblyError.Kind, tr.AssemblyError.Tools)
	}
	for _, st := range tr.Steps {
		label := fmt.Sprint(st.Index)
		if st.Phase != "" {
			label = st.Phase + " " + label
		}
		what := st.Action.Kind
		if st.Action.Tool != "" {
			what = st.Action.Tool
		}
		fmt.Fprintf(w, "step %-12s %-22s %-13s effective %d, total %d%s\n", label, what, st.Outcome.Status,
			st.Counters.EffectiveSteps, st.Counters.TotalSteps, map[bool]string{true: ", replayed", false: ""}[st.Replayed])
	}
	for _, ph := range tr.Phases {
		fmt.Fprintf(w, "phase %s ended %s\n", ph.Name, ph.End.Reason)
	}
	switch {
	case tr.End != nil:
		fmt.Fprintf(w, "ended %s (effective %d, total %d)\n", tr.End.Reason, tr.End.EffectiveSteps, tr.End.TotalSteps)
	case tr.Interrupted != nil:
		fmt.Fprintf(w, "interrupted at step %d during %s\n", tr.Interrupted.Step, tr.Interrupted.During)
	case tr.RunError != nil:
		fmt.Fprintf(w, "stopped with run_error %s\n", tr.RunError.Kind)
	}
}
