package cli

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"

	"github.com/polyloop/polyloop-conform/internal/decisions"
	"github.com/polyloop/polyloop-conform/internal/gate"
	"github.com/polyloop/polyloop-conform/internal/upstream"
)

func gateCmd(ctx context.Context, args []string, s stdio) int {
	fs := flag.NewFlagSet("gate", flag.ContinueOnError)
	fs.SetOutput(s.err)
	var o gate.Options
	fs.StringVar(&o.Dir, "dir", ".", "the repository's working tree")
	fs.StringVar(&o.Base, "base", "", "compare the working tree with this git `REV` (the pull request's base)")
	fs.StringVar(&o.Upstream, "upstream", "", "check PolyLoop's design docs in `DIR` against the upstream lock")
	fs.StringVar(&o.Lock, "lock", "", "upstream lock `FILE` (default docs/design/upstream.lock.json)")
	if err := fs.Parse(args); err != nil {
		return ExitSetup
	}
	res, err := gate.Check(ctx, o)
	if err != nil {
		return setupError(s, err)
	}
	for _, n := range res.Notes {
		fmt.Fprintf(s.out, "note: %s\n", n)
	}
	for _, p := range res.Problems {
		fmt.Fprintf(s.out, "FAIL %s\n", p)
	}
	if len(res.Problems) > 0 {
		fmt.Fprintf(s.out, "gate: %d problems\n", len(res.Problems))
		return ExitFail
	}
	fmt.Fprintln(s.out, "gate: passed")
	return ExitOK
}

func pinCmd(_ context.Context, args []string, s stdio) int {
	fs := flag.NewFlagSet("pin", flag.ContinueOnError)
	fs.SetOutput(s.err)
	up := fs.String("upstream", "", "PolyLoop's design-doc folder (`DIR`)")
	designDir := fs.String("design", gate.DesignDir, "local decision records (`DIR`)")
	lock := fs.String("lock", gate.LockFile, "lock `FILE` to write")
	if err := fs.Parse(args); err != nil {
		return ExitSetup
	}
	if *up == "" {
		return setupError(s, fmt.Errorf("pin needs --upstream DIR"))
	}
	dfs, err := designFS(*designDir)
	if err != nil {
		return setupError(s, err)
	}
	set, err := decisions.Load(dfs)
	if err != nil {
		return setupError(s, err)
	}
	ds, err := upstream.ReadDir(*up)
	if err != nil {
		return setupError(s, err)
	}
	l, unmapped := upstream.Pin(ds, set)
	if err := upstream.WriteLock(filepath.Clean(*lock), l); err != nil {
		return setupError(s, err)
	}
	for _, u := range unmapped {
		fmt.Fprintf(s.out, "warning: upstream %s maps to no local decision (gate will fail until a record says `- upstream: %s`)\n", u, u)
	}
	fmt.Fprintf(s.out, "pinned %d upstream decisions in %s\n", len(l.Decisions), *lock)
	return ExitOK
}
