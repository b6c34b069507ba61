package cli

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/polyloop/polyloop-conform/internal/isolate"
	"github.com/polyloop/polyloop-conform/internal/systrace"
)

// The speakers in speakers/ are protocol speakers in three more runtimes
// (a JVM, Node.js, a native binary), each a relay to serve-reference: what
// they put to the runner is how each runtime starts, writes its stdout,
// takes signals and leaves files, under the runner's isolation, its
// crash exploration and its power cuts (issue 50, "Real runtimes in CI").

// speakerRuntime is one runtime's relay and how to make it runnable.
type speakerRuntime struct {
	name string
	// build returns the command line that starts the relay (the child's
	// command line follows it), building into dir what needs building; an
	// error says which tool is missing.
	build func(dir string) (string, error)
	// pidFiles is the glob of the files the runtime writes in the
	// machine's /tmp on its own, each named for its PID ("": none).
	pidFiles string
}

var speakerRuntimes = []speakerRuntime{
	{"java", buildJavaRelay, perfDataGlob},
	{"node", buildNodeRelay, ""},
	{"c", buildCRelay, ""},
}

// speakerSource is the absolute path of a file under speakers/.
func speakerSource(rel string) (string, error) {
	return filepath.Abs(filepath.Join("..", "..", "speakers", rel))
}

// tool finds a program a speaker needs, saying what installs it.
func tool(name, pkg string) (string, error) {
	path, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("this speaker needs %s on the PATH (Debian: apt-get install %s), and there is none", name, pkg)
	}
	return path, nil
}

// buildJavaRelay compiles Relay.java once (javac, about a second) so that
// every start is the JVM's alone, not the source launcher's compile too.
func buildJavaRelay(dir string) (string, error) {
	javac, err := tool("javac", "default-jdk-headless")
	if err != nil {
		return "", err
	}
	java, err := tool("java", "default-jdk-headless")
	if err != nil {
		return "", err
	}
	src, err := speakerSource("java/Relay.java")
	if err != nil {
		return "", err
	}
	if out, err := exec.Command(javac, "-d", dir, src).CombinedOutput(); err != nil {
		return "", fmt.Errorf("javac %s: %v\n%s", src, err, out)
	}
	return java + " -cp " + dir + " Relay", nil
}

func buildNodeRelay(string) (string, error) {
	node, err := tool("node", "nodejs")
	if err != nil {
		return "", err
	}
	src, err := speakerSource("node/relay.js")
	return node + " " + src, err
}

func buildCRelay(dir string) (string, error) {
	cc, err := tool("cc", "gcc")
	if err != nil {
		return "", err
	}
	src, err := speakerSource("c/relay.c")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "relay")
	if out, err := exec.Command(cc, "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-o", bin, src).CombinedOutput(); err != nil {
		return "", fmt.Errorf("cc %s: %v\n%s", src, err, out)
	}
	return bin, nil
}

// speakerUnavailable skips a speaker whose toolchain is missing, saying
// why, except in CI (CI=true), which installs every toolchain (.ci/run):
// there a skip would hide a runtime the runner is no longer tried on.
func speakerUnavailable(t testing.TB, err error) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("%v; .ci/run installs it, and under CI=true no speaker may skip", err)
	}
	t.Skip(err)
}

// TestSpeakers runs each speaker as the runner runs any implementation:
// isolated (the default), two processes side by side (-p 2), with
// resumes, crash exploration and power cuts; POLYLOOP_LONG=1 runs the
// whole suite and explores every resume scenario. Before those, the
// relay's own process rules are checked directly: signals forwarded, no
// child outliving a killed relay, nothing but protocol lines on stdout.
// Each runtime's subtests run in order, the runtimes side by side: the
// slice starts each runtime 65 times (3 for the signals, 7 run, 22
// explore, 33 power loss), and a JVM start costs about a tenth of a
// second of CPU (BenchmarkSpeakerHello).
func TestSpeakers(t *testing.T) {
	t.Parallel()
	builds := t.TempDir()
	for _, rt := range speakerRuntimes {
		t.Run(rt.name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(builds, rt.name)
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			relay, err := rt.build(dir)
			if err != nil {
				speakerUnavailable(t, err)
			}
			impl := relay + " " + selfImpl(t) + " serve-reference"
			t.Run("signals", func(t *testing.T) { relaySignals(t, impl) })
			before := runtimeFiles(rt.pidFiles)
			t.Run("run", func(t *testing.T) { speakerRun(t, impl) })
			t.Run("explore", func(t *testing.T) { speakerExplore(t, impl) })
			t.Run("power-loss", func(t *testing.T) { speakerPowerLoss(t, impl) })
			if left := newRuntimeFiles(rt.pidFiles, before); len(left) > 0 {
				t.Errorf("the machine's /tmp keeps %d files the runtime named for processes that are gone (a resume must run on a machine of its own, and leave nothing in the machine's /tmp): %s", len(left), strings.Join(left, ", "))
				for _, f := range left { // said; now leave no trace
					os.Remove(f)
				}
			}
		})
	}
}

// speakerRun: a small slice on the slice's scenarios (the whole suite
// under POLYLOOP_LONG=1), isolated, two processes at once. The JVM's
// perf-data file is named for its PID; two JVMs that are both PID 5 of
// their own PID namespaces share the machine's /tmp/hsperfdata_<user>/5,
// and the second warns on stdout, which fails its handshake.
func speakerRun(t *testing.T, impl string) {
	args := []string{"run", "--impl", impl, "-p", "2", "--timeout", "60s", "--handshake-timeout", "60s"}
	if !long() {
		args = append(args, "--run", "resume.safe-replayed,resume.crash-before-end,resume.torn-tail")
	}
	code, out, errs := runBuilt(t, args...)
	if code != ExitOK {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, ExitOK, out, errs)
	}
	notIsolated(t, out)
}

// speakerExplore: every crash point of a cheap resume scenario, two
// processes at once (every resume scenario under POLYLOOP_LONG=1, four at
// once), each a kill of the relay's namespace and a new relay that
// resumes.
func speakerExplore(t *testing.T, impl string) {
	sel, p := "resume.never-crash-before-intent", "2"
	if long() {
		// Four at once, as .ci/run explores the Python example: the
		// starts wait more than they compute.
		sel, p = "resume.*", "4"
	}
	code, out, errs := runBuilt(t, "explore", "--impl", impl, "-p", p, "--run", sel, "--timeout", "60s", "--handshake-timeout", "60s")
	if code != ExitOK || !strings.Contains(out, " 0 failed points") {
		t.Fatalf("exit %d, want %d and no failed point\n%s\n%s", code, ExitOK, out, errs)
	}
	notIsolated(t, out)
}

// speakerPowerLoss: the power cut at every disk state of the resume
// scenario with the fewest records, the relay and its child under strace:
// the journal points reach the runner through the relay's stdout, the
// journal writes are the child's.
func speakerPowerLoss(t *testing.T, impl string) {
	if err := systrace.Available(); err != nil {
		speakerUnavailable(t, err)
	}
	code, out, errs := runBuilt(t, "explore", "--power-loss", "--impl", impl, "-p", "2", "--run", "resume.crash-before-end", "--timeout", "60s", "--handshake-timeout", "60s")
	if code != ExitOK || !strings.Contains(out, "resumed, 0 failed") {
		t.Fatalf("exit %d, want %d and no failed disk state\n%s\n%s", code, ExitOK, out, errs)
	}
}

// notIsolated fails a report that says a process ran without isolation,
// on a machine that isolates (the runner says so once per run).
func notIsolated(t *testing.T, out string) {
	t.Helper()
	if strings.Contains(out, "not isolated") || strings.Contains(out, "without isolation") {
		t.Errorf("the report says a process was not isolated:\n%s", out)
	}
}

// relaySignals starts the relay alone (no runner, no namespaces) and
// checks the process rules docs/implementing.md gives for a kernel with
// children: SIGTERM and SIGINT reach the child and the relay exits with
// it (128+N, as a shell reports a child killed by signal N); a relay
// killed outright leaves no child running; and stdout carries the
// protocol's lines only.
func relaySignals(t *testing.T, impl string) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGKILL} {
		t.Run(strings.ToUpper(unix(sig)), func(t *testing.T) {
			p := startRelay(t, impl)
			kid := p.child(t)
			if err := syscall.Kill(p.cmd.Process.Pid, sig); err != nil {
				t.Fatal(err)
			}
			err := p.wait(t)
			if sig == syscall.SIGKILL {
				// The JVM's perf-data file of a killed JVM stays until a
				// JVM of the same PID starts: remove it.
				removePerfData(p.cmd.Process.Pid)
			} else {
				var ee *exec.ExitError
				if !errors.As(err, &ee) || ee.ExitCode() != 128+int(sig) {
					t.Errorf("the relay ended with %v after %s, want exit status %d (its child ended by the signal it forwarded)", err, unix(sig), 128+int(sig))
				}
			}
			if gone := waitGone(kid, 10*time.Second); gone != "" {
				syscall.Kill(kid, syscall.SIGKILL)
				t.Errorf("after %s to the relay, its child serve-reference (pid %d) still runs: %s", unix(sig), kid, gone)
			}
			if extra := strings.TrimSpace(p.rest()); extra != "" {
				t.Errorf("the relay wrote to stdout what is no protocol line: %q", extra)
			}
		})
	}
}

// unix is a signal's name as kill(1) spells it: "sigterm".
func unix(sig syscall.Signal) string {
	switch sig {
	case syscall.SIGTERM:
		return "sigterm"
	case syscall.SIGINT:
		return "sigint"
	case syscall.SIGKILL:
		return "sigkill"
	}
	return sig.String()
}

// relayProc is a relay started by relaySignals, after its hello.
type relayProc struct {
	cmd    *exec.Cmd
	out    *bufio.Reader
	stdout []byte
	done   chan error
}

// startRelay starts impl as the relay process itself (exec through the
// shell, in a process group of its own so that no signal meant for it
// reaches the test) and shakes hands through it.
func startRelay(t *testing.T, impl string) *relayProc {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", "exec "+impl)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		stdin.Close()
	})
	p := &relayProc{cmd: cmd, out: bufio.NewReader(stdout), done: make(chan error, 1)}
	fmt.Fprintln(stdin, `{"type":"hello","suite":"polyloop-conform","suite_version":"0.3.0","protocol":1}`)
	line, err := p.out.ReadBytes('\n')
	var hello struct{ Type, Name string }
	if err != nil || json.Unmarshal(line, &hello) != nil || hello.Type != "hello" {
		t.Fatalf("the relay's first line is no hello: %q (%v)", line, err)
	}
	go func() {
		rest, _ := p.out.ReadBytes(0) // to the end of stdout
		p.stdout = rest
		p.done <- cmd.Wait()
	}()
	return p
}

// child is the pid of the relay's one child process.
func (p *relayProc) child(t *testing.T) int {
	t.Helper()
	kids := childrenOf(p.cmd.Process.Pid)
	if len(kids) != 1 {
		t.Fatalf("the relay (pid %d) has %d child processes, want its one serve-reference: %v", p.cmd.Process.Pid, len(kids), kids)
	}
	return kids[0]
}

// wait is the relay's exit, within 10 s.
func (p *relayProc) wait(t *testing.T) error {
	t.Helper()
	select {
	case err := <-p.done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatalf("the relay (pid %d) did not exit within 10 s of the signal", p.cmd.Process.Pid)
		return nil
	}
}

// rest is what the relay wrote to stdout after its hello.
func (p *relayProc) rest() string { return string(p.stdout) }

// childrenOf lists the processes whose parent is pid (from /proc).
func childrenOf(pid int) []int {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var kids []int
	for _, s := range stats {
		data, err := os.ReadFile(s)
		if err != nil {
			continue
		}
		// "pid (comm) state ppid ...": comm may hold spaces and parens.
		i := strings.LastIndexByte(string(data), ')')
		if f := strings.Fields(string(data[i+1:])); i > 0 && len(f) > 1 && f[1] == strconv.Itoa(pid) {
			n, _ := strconv.Atoi(filepath.Base(filepath.Dir(s)))
			kids = append(kids, n)
		}
	}
	slices.Sort(kids)
	return kids
}

// perfDataGlob is where a JVM keeps its perf-data file, named for its PID
// (HotSpot: /tmp/hsperfdata_<user>/<pid>, whatever TMPDIR says): the one
// file a runtime here writes in the machine's /tmp on its own.
const perfDataGlob = "/tmp/hsperfdata_*/*"

func removePerfData(pid int) {
	left, _ := filepath.Glob(strings.TrimSuffix(perfDataGlob, "*") + strconv.Itoa(pid))
	for _, f := range left {
		os.Remove(f)
	}
}

// runtimeFiles is each file matching glob with its inode.
func runtimeFiles(glob string) map[string]uint64 {
	got := map[string]uint64{}
	if glob == "" {
		return got
	}
	files, _ := filepath.Glob(glob)
	for _, f := range files {
		var st syscall.Stat_t
		if syscall.Stat(f, &st) == nil {
			got[f] = st.Ino
		}
	}
	return got
}

// newRuntimeFiles lists the files matching glob made since before (a new
// name, or a new file under an old one) whose PID is no running process
// of the runtime on this machine: files a process in a PID namespace of
// its own named for its PID there, left behind.
func newRuntimeFiles(glob string, before map[string]uint64) []string {
	var left []string
	for f, ino := range runtimeFiles(glob) {
		if old, ok := before[f]; ok && old == ino {
			continue
		}
		cmdline, _ := os.ReadFile("/proc/" + filepath.Base(f) + "/cmdline")
		if !strings.Contains(string(cmdline), "java") {
			left = append(left, f)
		}
	}
	slices.Sort(left)
	return left
}

// BenchmarkSpeakerHello: a speaker's start cost, one process as the
// runner starts a resume (`/bin/sh -c CMD`, in namespaces of its own
// when isolated), to the hello it answers; then its stdin ends and it
// exits. Metrics: hello-ms/op, the wall time to the hello; cpu-ms/op,
// the CPU of the whole process tree (the shell, the relay, its child),
// which load does not inflate. serve-reference alone is the part every
// relay adds its runtime to.
//
//	go test ./internal/cli -run '^$' -bench SpeakerHello -benchtime 20x
func BenchmarkSpeakerHello(b *testing.B) {
	builds := b.TempDir()
	serve := ref + " serve-reference"
	cases := []struct{ name, impl string }{{"serve-reference", serve}}
	for _, rt := range speakerRuntimes {
		dir := filepath.Join(builds, rt.name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		relay, err := rt.build(dir)
		if err != nil {
			b.Logf("%s: %v", rt.name, err)
			continue
		}
		cases = append(cases, struct{ name, impl string }{rt.name, relay + " " + serve})
	}
	for _, c := range cases {
		for _, isolated := range []bool{false, true} {
			b.Run(c.name+"/"+map[bool]string{false: "plain", true: "isolated"}[isolated], func(b *testing.B) {
				var hello, cpu time.Duration
				for i := 0; i < b.N; i++ {
					h, u := startToHello(b, c.impl, isolated)
					hello += h
					cpu += u
				}
				b.ReportMetric(float64(hello)/1e6/float64(b.N), "hello-ms/op")
				b.ReportMetric(float64(cpu)/1e6/float64(b.N), "cpu-ms/op")
			})
		}
	}
}

// startToHello starts impl once, isolated or not, and returns the time to
// its hello and the CPU its process tree used until it exited.
func startToHello(b *testing.B, impl string, isolated bool) (hello, cpu time.Duration) {
	cmd := exec.Command("/bin/sh", "-c", impl)
	start := cmd.Start
	if isolated {
		m := isolate.Wrap(cmd, isolate.Options{})
		if m == nil {
			b.Skip("no isolation on this machine")
		}
		start = m.Start
	}
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	t0 := time.Now()
	if err := start(); err != nil {
		b.Fatal(err)
	}
	fmt.Fprintln(stdin, `{"type":"hello","suite":"polyloop-conform","suite_version":"0.3.0","protocol":1}`)
	line, err := bufio.NewReader(stdout).ReadBytes('\n')
	hello = time.Since(t0)
	if err != nil || !strings.Contains(string(line), `"hello"`) {
		b.Fatalf("no hello from %s: %q (%v)", impl, line, err)
	}
	stdin.Close() // the end of its input: the relay's child exits, then the relay
	if err := cmd.Wait(); err != nil {
		b.Fatalf("%s: %v", impl, err)
	}
	// wait4's usage of the shell includes every descendant it waited
	// for, and each relay waits for its child.
	return hello, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
}
