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
	"testing"

	"github.com/polyloop/polyloop-conform/scenarios"
)

// buildChild compiles crashchild without the race detector into dir.
func buildChild(t *testing.T) string {
	t.Helper()
	exe := filepath.Join(t.TempDir(), "crashchild")
	cmd := exec.Command("go", "build", "-o", exe, "./crashchild")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build the crash child: %v\n%s", err, out)
	}
	return exe
}

// TestCrashPoints kills a real child process at every journal write point
// of every scenario that can run with a journal (the resume scenarios and
// all other single-request ones without blocking fakes) and checks the
// resume invariants (0002.D1-D5).
func TestCrashPoints(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns hundreds of processes")
	}
	scs, err := scenarios.LoadAll(scenarios.Embedded())
	if err != nil {
		t.Fatal(err)
	}
	exe := buildChild(t)
	total, replays, unknown, explored, resumeScenarios := 0, 0, 0, 0, 0
	for _, sc := range scs {
		if !Eligible(sc) {
			continue
		}
		if slices.Contains(sc.Requires, "resume") {
			resumeScenarios++
		}
		explored++
		t.Run(sc.ID, func(t *testing.T) {
			rep, err := Explore(context.Background(), exe, sc, t.TempDir(), runtime.GOMAXPROCS(0))
			if err != nil {
				t.Fatal(err)
			}
			total += rep.Points
			replays += rep.Replays
			unknown += rep.Unknown
			t.Logf("%s: %d crash points, %d SAFE replays, %d resume_outcome_unknown", sc.ID, rep.Points, rep.Replays, rep.Unknown)
			for _, f := range rep.Failures {
				t.Error(f)
			}
		})
	}
	if resumeScenarios == 0 || total == 0 {
		t.Fatal("no crash point was explored: the resume scenarios are missing")
	}
	summary := fmt.Sprintf("crash-point harness: %d scenarios (%d resume scenarios), %d crash points killed and resumed, %d SAFE replays, %d resume_outcome_unknown\n", explored, resumeScenarios, total, replays, unknown)
	t.Log(summary)
	// CI asks for the summary in a file, since go test hides a passing test's output.
	if path := os.Getenv("POLYLOOP_CRASH_SUMMARY"); path != "" {
		if err := os.WriteFile(path, []byte(summary), 0o644); err != nil {
			t.Error(err)
		}
	}
}

// BenchmarkKillAndResume measures crash-point exploration: each cycle is a
// child killed at one journal write point plus a child that resumes.
func BenchmarkKillAndResume(b *testing.B) {
	exe := filepath.Join(b.TempDir(), "crashchild")
	if out, err := exec.Command("go", "build", "-o", exe, "./crashchild").CombinedOutput(); err != nil {
		b.Fatalf("build: %v\n%s", err, out)
	}
	data, err := fs.ReadFile(scenarios.Embedded(), "resume.safe-replayed.yaml")
	if err != nil {
		b.Fatal(err)
	}
	sc, err := scenarios.Parse("resume.safe-replayed.yaml", data)
	if err != nil {
		b.Fatal(err)
	}
	cycles := 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rep, err := Explore(context.Background(), exe, sc, b.TempDir(), runtime.GOMAXPROCS(0))
		if err != nil || len(rep.Failures) > 0 {
			b.Fatalf("%v %v", err, rep.Failures)
		}
		cycles += rep.Points
	}
	b.ReportMetric(float64(cycles)/b.Elapsed().Seconds(), "cycles/s")
}
