package cli

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/polyloop/polyloop-conform/internal/fsrecord"
	"github.com/polyloop/polyloop-conform/internal/isolate"
	"github.com/polyloop/polyloop-conform/internal/systrace"
)

// requireRecorder skips, saying why, where explore --power-loss can
// record neither with FUSE nor with strace.
func requireRecorder(t *testing.T) {
	t.Helper()
	if err := fsrecord.Available(); err != nil {
		if err2 := systrace.Available(); err2 != nil {
			t.Skipf("%v; and %v", err, err2)
		}
	}
}

// pythonKernel is the command line of a Python kernel over the kit, with
// the kit and the example on its path.
func pythonKernel(t *testing.T, args string) string {
	t.Helper()
	exe := python(t) // skips, saying why, where there is no python3
	return "PYTHONPATH=" + pythonPath(t) + " LIAR_SHADOW=" + t.TempDir() + " " + exe + " " + args
}

// TestExplore_journalLiars: kernels that look crash-safe without resuming
// from the journal they are handed, or without a durable journal. Each
// passed run and explore before the runner moved the journal, forked
// resumes from a server of their own, tore a record no process completed
// and cut the power; each now fails, citing the decision it breaks.
func TestExplore_journalLiars(t *testing.T) {
	t.Parallel()
	selfImpl(t)
	liar := filepath.Join("testdata", "liars", "journal_liar.py")
	for _, tc := range []struct {
		mode string
		args []string
		want []string
	}{
		// The real journal in a shadow keyed by the journal_dir path: the
		// resumed process is given another path (0002.D1, 0002.D3). run
		// resumes once; explore (long) at every point.
		{"shadow-dir", []string{"run", "--run", "resume.crash-before-end"}, []string{"FAIL resume.crash-before-end", "resume.from: want step, got start", "0002.D3"}},
		{"shadow-dir", []string{"explore", "--run", "resume.crash-before-end"}, []string{"(0002.D3)"}},
		// The journal in memory mapped MAP_SHARED before the fork server
		// forks, keyed by the spec: resumes fork from another server.
		{"mapshared", []string{"explore", "-p", "1", "--run", "resume.never-not-replayed"}, []string{"(0002.D3)"}},
		// Refuses every torn tail but one whose record it saw written
		// whole: the runner now tears a record no process completed.
		{"shadow-repair", []string{"run", "--run", "resume.torn-tail"}, []string{"FAIL resume.torn-tail", "journal_damaged", "0002.D5"}},
		// Deletes phase i's journal when phase i+1 starts: every phase's
		// journal is held to its points whenever a process stops.
		{"phase-delete", []string{"run", "--run", "resume.crash-in-second-phase"}, []string{"phase 0: journal_dir", "holds no file", "0003.D1"}},
		// Forgets an unfinished NEVER intent when it resumes a later
		// phase: the mail goes out twice.
		{"phase-replay", []string{"run", "--run", "resume.never-in-second-phase"}, []string{"FAIL resume.never-in-second-phase", "resume_outcome_unknown", "0002.D4"}},
	} {
		t.Run(tc.mode+"/"+tc.args[0], func(t *testing.T) {
			if tc.args[0] == "explore" { // run pins each mistake in go test
				requireLong(t, "explore through a Python kernel at every point")
			}
			t.Parallel()
			args := append(tc.args, "--impl", pythonKernel(t, liar+" "+tc.mode), "--timeout", "60s", "--handshake-timeout", "60s")
			code, out, errs := runBuilt(t, args...)
			if code != ExitFail {
				t.Fatalf("exit %d, want %d\n%s\n%s", code, ExitFail, out, errs)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("report lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

// TestExplore_powerLoss: the reference and the Python example keep every
// record they report written through any power cut; a kernel whose fsync
// does nothing loses records, and the report names them.
func TestExplore_powerLoss(t *testing.T) {
	requireRecorder(t)
	t.Parallel()
	selfImpl(t)
	for _, tc := range []struct {
		name, impl string
		code       int
		want       []string
	}{
		{"reference", "", ExitOK, []string{"1 passed, 0 failed"}},
		{"python example", "-m polyloop_example", ExitOK, []string{"1 passed, 0 failed"}},
		{"no fsync", filepath.Join("testdata", "liars", "journal_liar.py") + " no-fsync", ExitFail,
			[]string{"the cut lost", "reported written, but not durable", "0002.D1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			switch tc.name {
			case "python example":
				requireLong(t, "the Python example kernel under strace is a check of the example, not of the runner")
			case "no fsync":
				// Each unsynced span multiplies the disk states (47 here, a
				// Python process under strace each); internal/powerloss's
				// TestPowerLossCatchesWhatKillsCannot and TestReplay_calls
				// pin the loss, and TestExplore_powerLossVariants/o-dsync
				// traces a Python kernel end to end in the fast tier.
				requireLong(t, "a lying Python kernel under strace at every disk state")
			}
			t.Parallel()
			// resume.crash-before-end: the fewest journal records of a
			// resume scenario (10 points), and each disk state a process
			// under strace.
			args := []string{"explore", "--power-loss", "--run", "resume.crash-before-end", "--timeout", "60s", "--handshake-timeout", "60s"}
			if tc.impl != "" {
				args = append(args, "--impl", pythonKernel(t, tc.impl))
			}
			code, out, errs := runBuilt(t, args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s\n%s", code, tc.code, out, errs)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("report lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

// TestExplore_phases: explore kills at every point of every phase and
// resumes with phase. The reference passes; a kernel that forgets an
// unfinished NEVER intent when it resumes a later phase is caught at the
// points between that intent and its result.
func TestExplore_phases(t *testing.T) {
	requireLong(t, "explores 42 points of two phases over the protocol; the fast tier pins each phase rule through run (TestExplore_journalLiars)")
	t.Parallel()
	selfImpl(t)
	code, out, errs := runBuilt(t, "explore", "--run", "resume.never-in-second-phase", "--timeout", "60s")
	if code != ExitOK || !strings.Contains(out, "1 passed, 0 failed") || strings.Contains(out, " 0 crash points") {
		t.Fatalf("the reference: exit %d\n%s\n%s", code, out, errs)
	}
	// The liar's mistake is pinned through run by TestExplore_journalLiars
	// (phase-replay); here explore meets it at every point, a Python
	// process for each.
	liar := pythonKernel(t, filepath.Join("testdata", "liars", "journal_liar.py")+" phase-replay")
	code, out, errs = runBuilt(t, "explore", "--impl", liar, "--run", "resume.never-in-second-phase", "--timeout", "60s", "--handshake-timeout", "60s")
	if code != ExitFail || !strings.Contains(out, "send:after:action_intent:step1: phase send:") || !strings.Contains(out, "0002.D4") {
		t.Fatalf("phase-replay: exit %d\n%s\n%s", code, out, errs)
	}
}

// TestExplore_powerLossVariants: kernels that make their journal durable
// in ways the reference does not are judged by the file system's rules,
// not by the shape of one syscall (testdata/durable/variants.py says how
// each writes). The honest ones pass every disk state, and run and
// explore too; the two that only look durable fail, naming 0002.D1. Each
// is a Python process under strace per disk state: the long tier. The
// rules are pinned without strace by internal/powerloss (TestReplay_calls
// has O_DSYNC, writev, rename and the lies), and
// TestExplore_powerLoss/reference traces end to end in go test.
func TestExplore_powerLossVariants(t *testing.T) {
	requireLong(t, "a Python kernel for every disk state")
	requireRecorder(t)
	t.Parallel()
	selfImpl(t)
	variants := filepath.Join("testdata", "durable", "variants.py")
	const single, phased = "resume.crash-before-end", "context.fragments-shared-across-phases"
	for _, tc := range []struct {
		mode, scenario string
		honest         bool
		want           []string
	}{
		{"o-dsync", single, true, nil},
		{"o-sync", phased, true, nil},
		{"writev", single, true, nil},
		{"rename", single, true, nil},
		{"writev-nosync", single, false, []string{"unsynced bytes lost", "reported written, but not durable", "0002.D1"}},
		{"phase-nosync", phased, false, []string{"the cut lost phase 1 record", "reported written, but not durable", "0002.D1"}},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			impl := pythonKernel(t, variants+" "+tc.mode)
			code, out, errs := runBuilt(t, "explore", "--power-loss", "--run", tc.scenario, "-p", "4", "--timeout", "60s", "--handshake-timeout", "60s", "--impl", impl)
			if strings.Contains(out, " 0 disk states resumed") || !strings.Contains(out, "0 skipped") {
				t.Fatalf("nothing judged (exit %d):\n%s\n%s", code, out, errs)
			}
			if !tc.honest {
				if code != ExitFail {
					t.Fatalf("a lie passed: exit %d\n%s\n%s", code, out, errs)
				}
				for _, w := range tc.want {
					if !strings.Contains(out, w) {
						t.Errorf("report lacks %q:\n%s", w, out)
					}
				}
				return
			}
			if code != ExitOK || !strings.Contains(out, " 0 failed; recorder") {
				t.Fatalf("an honest journal failed explore --power-loss: exit %d\n%s\n%s", code, out, errs)
			}
			if long() { // honest under kills and in a plain run too
				for _, cmd := range []string{"run", "explore"} {
					if code, out, errs := runBuilt(t, cmd, "--run", tc.scenario, "--timeout", "60s", "--handshake-timeout", "60s", "--impl", impl); code != ExitOK {
						t.Errorf("%s: exit %d\n%s\n%s", cmd, code, out, errs)
					}
				}
			}
		})
	}
}

// TestExplore_powerLossDisks: journals the runner cannot tie to a file
// (SQLite, a line journal beside a scratch marker) pass every disk state
// the recorder leaves; the lies, each invisible to run and to
// explore, are red with a sentence naming 0002.D1 and the record the cut
// lost (testdata/durable/disks.py says how each writes). Each disk state
// is a Python process: the long tier. The fast tier pins the recorder and
// the wire-bounded judge with the reference (TestExplore_powerLoss).
func TestExplore_powerLossDisks(t *testing.T) {
	requireLong(t, "a Python kernel for every disk state")
	if err := fsrecord.Available(); err != nil {
		t.Skip(err) // these lies are the recorder's to catch
	}
	t.Parallel()
	selfImpl(t)
	disks := filepath.Join("testdata", "durable", "disks.py")
	for _, tc := range []struct {
		mode   string
		honest bool
	}{
		{"sqlite-rollback", true},
		{"sqlite-wal", true},
		{"marker", true},
		{"syncfs", true},
		{"sync", true},
		{"points-only", false},
		{"path-looks", false},
		{"traced-only", false},
		{"resumed-nosync", false},
		{"syncfs-shm", false},
		{"mmap-nomsync", false},
		{"sendfile-nosync", false},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			impl := pythonKernel(t, disks+" "+tc.mode)
			code, out, errs := runBuilt(t, "explore", "--power-loss", "--run", "resume.crash-before-end", "-p", "2", "--timeout", "60s", "--handshake-timeout", "60s", "--impl", impl)
			if strings.Contains(out, " 0 disk states resumed") || !strings.Contains(out, "recorder: fuse") {
				t.Fatalf("nothing judged on the recorder (exit %d):\n%s\n%s", code, out, errs)
			}
			if tc.honest {
				if code != ExitOK {
					t.Fatalf("an honest journal failed explore --power-loss: exit %d\n%s\n%s", code, out, errs)
				}
				return
			}
			if code != ExitFail {
				t.Fatalf("a lie passed: exit %d\n%s\n%s", code, out, errs)
			}
			for _, w := range []string{"the cut lost", "reported written, but not durable", "0002.D1"} {
				if !strings.Contains(out, w) {
					t.Errorf("report lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

// TestExplore_powerLossSyncsUnobserved: with no machine (isolation off),
// no init stops a process's syncfs for the runner, and the kernel tells
// FUSE nothing of it: the report says syncfs is not observed there, and
// a journal kept by syncfs alone is not durable by what the disk saw.
func TestExplore_powerLossSyncsUnobserved(t *testing.T) {
	requireLong(t, "a Python kernel for every disk state")
	if err := fsrecord.Available(); err != nil {
		t.Skip(err)
	}
	t.Parallel()
	selfImpl(t)
	impl := pythonKernel(t, filepath.Join("testdata", "durable", "disks.py")+" syncfs")
	code, out, errs := runBuiltEnv(t, []string{isolate.NoIsolationEnv + "=1"}, "explore", "--power-loss", "--run", "resume.crash-before-end", "-p", "2", "--timeout", "60s", "--handshake-timeout", "60s", "--impl", impl)
	if code != ExitFail || !strings.Contains(out, "recorder: fuse") || !strings.Contains(out, "syncfs and sync not observed: its processes run on no machine of their own") ||
		!strings.Contains(out, "FUSE file system (syncfs and sync not observed)") {
		t.Fatalf("exit %d, want %d and the unobserved syncs named\n%s\n%s", code, ExitFail, out, errs)
	}
}

// TestExplore_powerLossJudgedNothing: a power-loss run that judged no disk
// state (every scenario skipped: the implementation claims no resume) is
// an error, exit 1, saying why; a shard holding none of the selection
// claims nothing and errs nothing.
func TestExplore_powerLossJudgedNothing(t *testing.T) {
	requireRecorder(t)
	t.Parallel()
	impl := "sh " + filepath.Join("testdata", "impls", "no-capability.sh")
	code, out, errs := runBuilt(t, "explore", "--power-loss", "--run", "resume.crash-before-end", "--impl", impl)
	if code != ExitFail || !strings.Contains(out, "judged no disk state") {
		t.Fatalf("exit %d, want %d and the reason\n%s\n%s", code, ExitFail, out, errs)
	}
	for k := 1; k <= 2; k++ {
		code, out, errs = runBuilt(t, "explore", "--power-loss", "--run", "resume.crash-before-end", "--shard", strconv.Itoa(k)+"/2", "--impl", impl)
		if strings.Contains(out, "0 scenarios,") && code != ExitOK {
			t.Errorf("shard %d/2 holds nothing, yet exit %d\n%s\n%s", k, code, out, errs)
		}
	}
}
