package isolate

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// helperEnv makes this test binary, run on a machine, the implementation
// (TestSyncsHelper): "<dir> <n>".
const helperEnv = "POLYLOOP_SYNCS_HELPER"

// TestSyncsHelper is the implementation process of the tests below, not a
// test: with helperEnv set, it writes a file in dir and syncfs it, calls
// sync, syncfs on /dev/shm (the machine's own tmpfs), makes dir/after,
// prints its Seccomp mode, then times n syncfs calls on /dev/shm.
func TestSyncsHelper(t *testing.T) {
	arg := os.Getenv(helperEnv)
	if arg == "" {
		t.Skip("the implementation process of TestWrap_syncsTold, run only by it")
	}
	dir, count, _ := strings.Cut(arg, " ")
	n, _ := strconv.Atoi(count)
	f, err := os.Create(filepath.Join(dir, "journal"))
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("record\n")
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(unix.Syncfs(int(f.Fd())))
	unix.Sync()
	shm, err := os.Open("/dev/shm")
	must(err)
	must(unix.Syncfs(int(shm.Fd())))
	must(os.WriteFile(filepath.Join(dir, "after"), nil, 0o644))
	status, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(status), "\n") {
		if strings.HasPrefix(line, "Seccomp:") || strings.HasPrefix(line, "NoNewPrivs:") {
			fmt.Println(strings.Join(strings.Fields(line), " "))
		}
	}
	start := time.Now()
	for range n {
		must(unix.Syncfs(int(shm.Fd())))
	}
	if n > 0 {
		fmt.Printf("ns/syncfs %d\n", time.Since(start).Nanoseconds()/int64(n))
	}
}

// runHelper runs TestSyncsHelper on a machine that carries dir, told of
// its syncs by sink when it is set, and returns its output.
func runHelper(t testing.TB, dir string, n int, sink func(SyncCall)) (string, bool) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestSyncsHelper$", "-test.v")
	cmd.Env = append(os.Environ(), helperEnv+"="+dir+" "+strconv.Itoa(n))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	m := Wrap(cmd, Options{Carry: []string{dir}, Syncs: sink})
	if m == nil {
		t.Skip("no isolation on this machine")
	}
	if err := m.Start(); err != nil {
		t.Skipf("the kernel refuses the namespaces here: %v", err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	return out.String(), m.SyncsObserved()
}

// TestWrap_syncsTold: a machine asked for its syncs (Options.Syncs) tells
// the runner of each syncfs and sync its process makes, while the process
// waits (dir/after is made only after the three calls returned): a syncfs
// of the carried directory names its device, sync is All, a syncfs of
// the machine's /dev/shm another device; each from the machine's PID
// namespace. A machine not asked has no filter at all.
func TestWrap_syncsTold(t *testing.T) {
	dir := t.TempDir()
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		t.Fatal(err)
	}
	own, _ := os.Readlink("/proc/self/ns/pid")
	var mu sync.Mutex
	var calls []SyncCall
	var early []string
	out, observed := runHelper(t, dir, 0, func(c SyncCall) {
		mu.Lock()
		defer mu.Unlock()
		calls = append(calls, c)
		if _, err := os.Stat(filepath.Join(dir, "after")); err == nil {
			early = append(early, fmt.Sprintf("%+v", c))
		}
	})
	if !observed || !strings.Contains(out, "Seccomp: 2") {
		t.Fatalf("observed %v; the process's status:\n%s", observed, out)
	}
	// Every call was answered before the process went on, so before it
	// exited; the lock orders the sink's writes before these reads.
	mu.Lock()
	defer mu.Unlock()
	if strings.Contains(out, "NoNewPrivs: 1") || strings.Contains(out, "no_new_privs") {
		// The init holds CAP_SYS_ADMIN in its user namespace: the kernel
		// takes it in place of no_new_privs, which would stop setuid
		// programs on the machine.
		t.Errorf("the filter needed no_new_privs:\n%s", out)
	}
	if len(early) > 0 {
		t.Errorf("calls told after the process went on: %v", early)
	}
	if len(calls) != 3 || calls[0].All || calls[0].Dev != st.Dev || !calls[1].All || calls[2].All || calls[2].Dev == st.Dev {
		t.Fatalf("told %+v, want a syncfs of device %d, a sync, a syncfs of another device", calls, st.Dev)
	}
	for _, c := range calls {
		if c.PidNS == "" || c.PidNS == own {
			t.Errorf("a call from PID namespace %q, want the machine's (the runner's is %q)", c.PidNS, own)
		}
	}
	out, observed = runHelper(t, t.TempDir(), 0, nil)
	if observed || !strings.Contains(out, "Seccomp: 0") {
		t.Errorf("a machine not asked for its syncs: observed %v, status\n%s", observed, out)
	}
}

// BenchmarkSyncfs: what the runner's hearing costs a syncfs, timed inside
// the machine (ns/syncfs), with the filter and without: the difference
// is the cost of one notification, received, resolved and let go on.
func BenchmarkSyncfs(b *testing.B) {
	for _, told := range []bool{false, true} {
		b.Run(map[bool]string{false: "unfiltered", true: "told"}[told], func(b *testing.B) {
			var sink func(SyncCall)
			if told {
				sink = func(SyncCall) {}
			}
			out, _ := runHelper(b, b.TempDir(), max(b.N, 1000), sink)
			_, after, ok := strings.Cut(out, "ns/syncfs ")
			ns, err := strconv.Atoi(strings.Fields(after + " x")[0])
			if !ok || err != nil {
				b.Fatalf("no timing in\n%s", out)
			}
			b.ReportMetric(float64(ns), "ns/syncfs")
		})
	}
}
