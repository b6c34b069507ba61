package powerloss

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sync/errgroup"

	"github.com/polyloop/polyloop-conform/internal/crashpoint"
	"github.com/polyloop/polyloop-conform/internal/deviation"
	"github.com/polyloop/polyloop-conform/scenarios"
)

func TestDiskStates(t *testing.T) {
	d := &Disk{}
	d.MkdirAll("/r")
	f, err := d.Create("/r/j")
	if err != nil {
		t.Fatal(err)
	}
	if got := len(d.States()); got != 2 {
		t.Errorf("a new file in an unsynced directory: %d states, want 2 (missing, empty)", got)
	}
	d.SyncDir("/r")
	f.Write([]byte(strings.Repeat("a", 100)))
	f.Sync()
	f.Write([]byte(strings.Repeat("b", 1000))) // bytes 100..1099, unsynced
	var sizes []int
	for _, s := range d.States() {
		sizes = append(sizes, len(s.Files["/r/j"]))
	}
	// Lost, torn at the sector boundaries 512 and 1024, kept.
	if fmt.Sprint(sizes) != "[100 512 1024 1100]" {
		t.Errorf("states after an unsynced write: sizes %v, want [100 512 1024 1100]", sizes)
	}
	f.Sync()
	if got := d.States(); len(got) != 1 || len(got[0].Files["/r/j"]) != 1100 {
		t.Errorf("after sync: %d states", len(got))
	}

	cut := &Disk{Cut: 2}
	cut.MkdirAll("/r")
	g, _ := cut.Create("/r/j")
	cut.SyncDir("/r")
	if _, err := g.Write([]byte("x")); err != ErrPowerCut || !cut.PowerCut() {
		t.Errorf("the third operation after a cut at 2: %v", err)
	}
	back := Restore(cut.States()[0])
	if data, err := back.ReadFile("/r/j"); err != nil || len(data) != 0 {
		t.Errorf("restored: %q %v", data, err)
	}
	if _, err := back.ReadFile("/r/none"); !errorsIsNotExist(err) {
		t.Errorf("a missing file: %v", err)
	}
}

func errorsIsNotExist(err error) bool {
	pe, ok := err.(*fs.PathError)
	return ok && pe.Err == fs.ErrNotExist
}

// explore runs the power-loss exploration over every scenario a kill
// exploration takes and sums the results.
func explore(t *testing.T, o Options, only func(*scenarios.Scenario) bool) (sum Result, scs int) {
	t.Helper()
	all, err := scenarios.LoadEmbedded()
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	g, ctx := errgroup.WithContext(context.Background())
	g.SetLimit(4)
	for _, sc := range all {
		// The modelled disk runs the reference in process, one request.
		if !crashpoint.Eligible(sc) || sc.Request == nil || (only != nil && !only(sc)) {
			continue
		}
		scs++
		g.Go(func() error {
			r, err := Explore(ctx, sc, o)
			if err != nil {
				return err
			}
			mu.Lock()
			defer mu.Unlock()
			sum.Moments += r.Moments
			sum.States += r.States
			sum.NotStarted += r.NotStarted
			sum.Resumed += r.Resumed
			sum.Lost += r.Lost
			sum.Doubled += r.Doubled
			for _, f := range r.Failures {
				sum.Failures = append(sum.Failures, sc.ID+": "+f)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	return sum, scs
}

// TestPowerLoss cuts the power after every disk operation of every
// explorable scenario and resumes from every state the disk may be left
// in: no result may be lost and no NEVER handler may run twice.
func TestPowerLoss(t *testing.T) {
	if testing.Short() {
		t.Skip("thousands of runs")
	}
	// Whole under POLYLOOP_LONG=1, which .ci/run sets (README, "The
	// tests"): the exploration is thousands of runs. In a developer's go
	// test a fixed slice: the first explorable scenario of each family
	// and the NEVER and SAFE resume scenarios.
	var only func(*scenarios.Scenario) bool
	if os.Getenv("POLYLOOP_LONG") != "1" {
		families := map[string]bool{}
		only = func(sc *scenarios.Scenario) bool {
			first := !families[scenarios.Family(sc.ID)]
			families[scenarios.Family(sc.ID)] = true
			return first || sc.ID == "resume.never-not-replayed" || sc.ID == "resume.safe-replayed"
		}
	}
	sum, scs := explore(t, Options{Driver: driver(nil)}, only)
	for i, f := range sum.Failures {
		if i == 10 {
			t.Errorf("… and %d more", len(sum.Failures)-10)
			break
		}
		t.Error(f)
	}
	if sum.States == 0 || sum.Resumed == 0 {
		t.Fatalf("nothing was explored: %+v", sum)
	}
	line := fmt.Sprintf("power-loss exploration: %d scenarios, %d power cuts, %d disk states tried, %d resumed, %d never started, %d lost, %d doubled NEVER calls\n",
		scs, sum.Moments, sum.States, sum.Resumed, sum.NotStarted, sum.Lost, sum.Doubled)
	t.Log(line)
	if path := os.Getenv("POLYLOOP_POWERLOSS_SUMMARY"); path != "" {
		if err := os.WriteFile(path, []byte(line), 0o644); err != nil {
			t.Error(err)
		}
	}
}

// TestPowerLossCatchesWhatKillsCannot: a journal whose syncs make nothing
// durable passes every kill (the kernel keeps what it was given) but a
// power cut loses its records, and the exploration says so.
func TestPowerLossCatchesWhatKillsCannot(t *testing.T) {
	never := func(sc *scenarios.Scenario) bool { return sc.ID == "resume.never-not-replayed" }
	sum, _ := explore(t, Options{Driver: driver(nil), LyingSync: true}, never)
	if sum.Lost+sum.Doubled == 0 {
		t.Fatalf("an unsynced journal survived every power cut: %+v", sum)
	}
	if !strings.Contains(strings.Join(sum.Failures, "\n"), "unsynced bytes lost") {
		t.Errorf("no failure names the lost unsynced bytes:\n%s", strings.Join(sum.Failures, "\n"))
	}
}

// TestPowerLossCatchesIntentAfterAction: a kernel that journals an
// action's intent only after running it doubles a NEVER call when the
// power goes off before that late intent is durable (0002.D1).
func TestPowerLossCatchesIntentAfterAction(t *testing.T) {
	never := func(sc *scenarios.Scenario) bool { return sc.ID == "resume.never-not-replayed" }
	sum, _ := explore(t, Options{Driver: driver(deviation.Set{deviation.IntentAfterAction: true})}, never)
	if sum.Doubled == 0 {
		t.Fatalf("no doubled NEVER call: %+v", sum)
	}
}
