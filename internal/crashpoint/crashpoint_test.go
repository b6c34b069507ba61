package crashpoint

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/polyloop/polyloop-conform/internal/deviation"
	"github.com/polyloop/polyloop-conform/internal/implproc"
	"github.com/polyloop/polyloop-conform/scenarios"
)

// startReference builds polyloop-conform without the race detector (the
// exploration spawns hundreds of processes) and starts a client on its
// serve-reference, with extra arguments such as --mutant.
func startReference(tb testing.TB, extra ...string) *implproc.Client {
	tb.Helper()
	exe := filepath.Join(tb.TempDir(), "polyloop-conform")
	if out, err := exec.Command("go", "build", "-o", exe, "../../cmd/polyloop-conform").CombinedOutput(); err != nil {
		tb.Fatalf("build polyloop-conform: %v\n%s", err, out)
	}
	args := append([]string{"serve-reference"}, extra...)
	c := &implproc.Client{Command: func() *exec.Cmd { return exec.Command(exe, args...) }}
	if err := c.Start(context.Background()); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(c.Close)
	return c
}

// TestCrashPoints kills the reference at every journal write point of
// every scenario that can run with a journal and checks the resume
// invariants (0002.D1-D5) with the same Explore and Judge that explore
// uses for any implementation. It runs the kernel in process (see
// inProcess); TestExploreCatchesNeverReplayed and internal/cli's
// TestExploreOverTheProtocol run the exploration over the protocol with
// real processes, and CI runs all of it that way.
func TestCrashPoints(t *testing.T) {
	scs, err := scenarios.LoadEmbedded()
	if err != nil {
		t.Fatal(err)
	}
	c := newInProcess()
	total, replays, unknown, explored, resumeScenarios := 0, 0, 0, 0, 0
	// Whole under POLYLOOP_LONG=1, which .ci/run sets (README, "The
	// tests"); in a developer's go test a fixed slice: the first eligible
	// scenario of each family and the NEVER and SAFE resume scenarios.
	whole := os.Getenv("POLYLOOP_LONG") == "1"
	families := map[string]bool{}
	for _, sc := range scs {
		// Phased scenarios are explored over the protocol only (explore,
		// TestExplore_phases in internal/cli): the in-process runner
		// resumes a single request.
		if !Eligible(sc) || sc.Request == nil {
			continue
		}
		first := !families[scenarios.Family(sc.ID)]
		families[scenarios.Family(sc.ID)] = true
		if !whole && !first && sc.ID != "resume.never-not-replayed" && sc.ID != "resume.safe-replayed" {
			continue
		}
		if slices.Contains(sc.Requires, "resume") {
			resumeScenarios++
		}
		explored++
		res := Explore(context.Background(), c, sc, Options{Timeout: 30 * time.Second, Parallel: 2 * runtime.GOMAXPROCS(0)})
		if res.Baseline != nil {
			t.Errorf("%s: %v", sc.ID, res.Baseline)
		}
		if res.Explored != res.Points {
			t.Errorf("%s: explored %d of %d points", sc.ID, res.Explored, res.Points)
		}
		total += res.Explored
		replays += res.Replays
		unknown += res.Unknown
		for _, f := range res.Failures {
			t.Errorf("%s: %s", sc.ID, f)
		}
	}
	if resumeScenarios == 0 || total == 0 {
		t.Fatal("no crash point was explored: the resume scenarios are missing")
	}
	summary := fmt.Sprintf("crash-point exploration: %d scenarios (%d resume scenarios), %d crash points killed and resumed, %d SAFE replays, %d resume_outcome_unknown\n", explored, resumeScenarios, total, replays, unknown)
	t.Log(summary)
	// CI asks for the summary in a file, since go test hides a passing test's output.
	if path := os.Getenv("POLYLOOP_CRASH_SUMMARY"); path != "" {
		if err := os.WriteFile(path, []byte(summary), 0o644); err != nil {
			t.Error(err)
		}
	}
}

// TestExploreCatchesNeverReplayed: a kernel that runs an unfinished NEVER
// action again after a kill is caught at the point between its intent and
// its result, citing 0002.D4.
func TestExploreCatchesNeverReplayed(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	t.Run("over the protocol", func(t *testing.T) {
		// Builds the CLI (a link, seconds on 2 cores) for one scenario
		// that internal/cli's TestExploreCatchesANeverReplay already
		// explores over the protocol in the fast tier.
		if os.Getenv("POLYLOOP_LONG") != "1" {
			t.Skip("builds the CLI to explore over the protocol; POLYLOOP_LONG=1 runs it (.ci/run sets it)")
		}
		catchesNeverReplayed(t, startReference(t, "--mutant", "never-replayed"))
	})
	t.Run("in process", func(t *testing.T) {
		r := newInProcess()
		r.opts.Deviations = deviation.Set{deviation.NeverReplayed: true}
		catchesNeverReplayed(t, r)
	})
}

func catchesNeverReplayed(t *testing.T, r Runner) {
	sc := load(t, "resume.never-not-replayed.yaml")
	res := Explore(context.Background(), r, sc, Options{Timeout: 30 * time.Second, Parallel: 2})
	if res.Baseline != nil {
		t.Fatal(res.Baseline)
	}
	// The kill falls between the NEVER step's intent and its result; only
	// there can its action be left unfinished.
	var hits []string
	for _, f := range res.Failures {
		if (strings.HasPrefix(f, "after:action_intent:step2: ") || strings.HasPrefix(f, "before:action_result:step2: ")) && strings.Contains(f, "0002.D4") {
			hits = append(hits, f)
		}
	}
	if len(hits) == 0 {
		t.Fatalf("never-replayed survived exploration; failures: %q", res.Failures)
	}
}

func load(tb testing.TB, file string) *scenarios.Scenario {
	tb.Helper()
	data, err := fs.ReadFile(scenarios.Embedded(), file)
	if err != nil {
		tb.Fatal(err)
	}
	sc, err := scenarios.Parse(file, data)
	if err != nil {
		tb.Fatal(err)
	}
	return sc
}

// BenchmarkKillAndResume measures crash-point exploration over the
// protocol against serve-reference: each cycle is a process killed at one
// journal write point plus a new process that resumes.
func BenchmarkKillAndResume(b *testing.B) {
	sc := load(b, "resume.safe-replayed.yaml")
	c := startReference(b)
	cycles := 0
	b.ResetTimer()
	for b.Loop() {
		res := Explore(context.Background(), c, sc, Options{Timeout: 30 * time.Second, Parallel: 2 * runtime.GOMAXPROCS(0)})
		if res.Baseline != nil || len(res.Failures) > 0 {
			b.Fatalf("%v %v", res.Baseline, res.Failures)
		}
		cycles += res.Explored
	}
	b.ReportMetric(float64(cycles)/b.Elapsed().Seconds(), "cycles/s")
}
