package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The pool server (testdata/impls/pool-server.py) claims `fork-server`
// without os.fork, as a runtime without fork(2) must: workers started with
// subprocess, handed the three paths of a `fork` (docs/implementing.md,
// "The fork server without fork(2)"). These tests hold it to the rules
// that section states, from the start log it keeps ($POLYLOOP_STARTS).

// poolEvent is one line of the pool server's start log: impl (a process
// started from --impl), fork (its first fork request), spawn (a worker
// started), worker (a worker's imports done).
type poolEvent struct {
	kind, server string
	pid          int
}

// poolStarts is what one command cost in runtime starts, from the log.
type poolStarts struct {
	events []poolEvent
	impl   int // processes started from --impl
	spawn  int // workers the pools started
	forked int // servers that were asked to fork
}

// total is every runtime start: the processes from --impl and the workers.
func (s poolStarts) total() int { return s.impl + s.spawn }

// early lists the workers a server started before its first fork request:
// a pool started at hello.
func (s poolStarts) early() []string {
	var out []string
	asked := map[string]bool{}
	for _, e := range s.events {
		switch e.kind {
		case "fork":
			asked[e.server] = true
		case "spawn":
			if !asked[e.server] {
				out = append(out, fmt.Sprintf("server %s started worker %d before any fork", e.server, e.pid))
			}
		}
	}
	return out
}

func readPoolStarts(t *testing.T, path string) poolStarts {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var s poolStarts
	for i, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if line == "" {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 2 {
			t.Fatalf("%s:%d: %q is not <event> <server> [<pid>]", path, i+1, line)
		}
		e := poolEvent{kind: f[0], server: f[1]}
		if len(f) > 2 {
			if e.pid, err = strconv.Atoi(f[2]); err != nil {
				t.Fatalf("%s:%d: %v", path, i+1, err)
			}
		}
		s.events = append(s.events, e)
		switch e.kind {
		case "impl":
			s.impl++
		case "spawn":
			s.spawn++
		case "fork":
			s.forked++
		}
	}
	return s
}

// poolCommand is the pool server's command line for --impl, logging its
// starts to a new file (returned); env adds VAR=value settings.
func poolCommand(t *testing.T, env ...string) (impl, starts string) {
	t.Helper()
	exe := python(t) // skips, saying why, where there is no python3
	if runtime.GOOS != "linux" {
		t.Skip("the pool's checks read /proc")
	}
	starts = filepath.Join(t.TempDir(), "starts")
	env = append([]string{"PYTHONPATH=" + pythonPath(t), "POLYLOOP_STARTS=" + starts}, env...)
	return strings.Join(env, " ") + " " + exe + " " + filepath.Join("testdata", "impls", "pool-server.py"), starts
}

// pythonPath is the PYTHONPATH of the kit and the example kernel.
func pythonPath(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, "adapters", "python") + string(os.PathListSeparator) + filepath.Join(root, "examples", "python")
}

// TestPoolServer_startsOnFirstFork: a process that is never asked to fork
// starts no worker (`run --no-fork`, where the first process runs the
// scenario itself); under a fork server every worker follows the server's
// first fork request. The pool started at hello (POOL_AT_HELLO=1) is
// caught both ways.
func TestPoolServer_startsOnFirstFork(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		env    []string
		flags  []string
		spawns int // workers started: the one handed to the fork and one ahead
		early  bool
	}{
		{"no fork", nil, []string{"--no-fork"}, 0, false},
		{"fork server", nil, nil, 2, false},
		{"no fork, pool at hello", []string{"POOL_AT_HELLO=1"}, []string{"--no-fork"}, 1, true},
		{"fork server, pool at hello", []string{"POOL_AT_HELLO=1"}, nil, 2, true},
	} {
		impl, file := poolCommand(t, tc.env...)
		// The start log is outside the machines: --carry binds it in.
		args := append([]string{"run", "--impl", impl, "--carry", filepath.Dir(file), "--run", "outcome.normal-return", "--handshake-timeout", "60s", "--timeout", "60s"}, tc.flags...)
		code, out, errs := run(t, args...)
		if code != ExitOK || !strings.Contains(out, "1 passed, 0 failed") {
			t.Fatalf("%s: exit %d\n%s\n%s", tc.name, code, out, errs)
		}
		s := readPoolStarts(t, file)
		t.Logf("%s: %d from --impl, %d workers: %v", tc.name, s.impl, s.spawn, s.events)
		if s.impl != 1 || s.spawn != tc.spawns {
			t.Errorf("%s: %d processes from --impl and %d workers, want 1 and %d", tc.name, s.impl, s.spawn, tc.spawns)
		}
		if early := s.early(); (len(early) > 0) != tc.early {
			t.Errorf("%s: workers started before the first fork: %q (want some: %v)", tc.name, early, tc.early)
		}
	}
}

// TestPoolServer_workers: a pool worker leads a process group of its own,
// never holds the server's stdout, behaves as a new process once handed
// the paths of a fork, and exits when its server dies, so killing the
// server leaves no worker behind and ends its stdout at once. Each rule is
// shown to catch the server that breaks it (POOL_MISTAKE).
func TestPoolServer_workers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		mistake string
		want    string // in the one problem the checks must report; "" for none
	}{
		{"", ""},
		{"stdout", "stdout"},
		{"group", "process group"},
		{"orphan", "outlived its server"},
	} {
		t.Run("mistake="+tc.mistake, func(t *testing.T) {
			t.Parallel()
			problems := workerProblems(t, "POOL_MISTAKE="+tc.mistake)
			t.Logf("POOL_MISTAKE=%s: %q", tc.mistake, problems)
			switch {
			case tc.want == "" && len(problems) > 0:
				t.Errorf("the pool server breaks the worker rules:\n%s", strings.Join(problems, "\n"))
			case tc.want != "" && (len(problems) != 1 || !strings.Contains(problems[0], tc.want)):
				t.Errorf("POOL_MISTAKE=%s: the checks found %q, want one problem naming %q", tc.mistake, problems, tc.want)
			}
		})
	}
}

// workerProblems starts the pool server with env, asks it for one fork,
// shakes hands with the handed worker, looks at the worker it started
// ahead, kills the server and returns each worker rule broken.
func workerProblems(t *testing.T, env ...string) []string {
	t.Helper()
	_, file := poolCommand(t)
	dir := t.TempDir()
	cmd := exec.Command(pythonExe(t), noSite, filepath.Join("testdata", "impls", "pool-server.py"))
	cmd.Env = append(os.Environ(), append([]string{"PYTHONPATH=" + pythonPath(t), "POLYLOOP_STARTS=" + file}, env...)...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	lines := bufio.NewReader(stdout)
	ask := func(m map[string]any) map[string]any {
		t.Helper()
		data, _ := json.Marshal(m)
		if _, err := stdin.Write(append(data, '\n')); err != nil {
			t.Fatal(err)
		}
		line, err := lines.ReadBytes('\n')
		if err != nil {
			t.Fatalf("the server's answer to %s: %v", data, err)
		}
		var answer map[string]any
		if err := json.Unmarshal(line, &answer); err != nil {
			t.Fatalf("the server's stdout is not the protocol: %q", line)
		}
		return answer
	}
	var problems []string
	hello := ask(map[string]any{"type": "hello", "suite": "polyloop-conform", "suite_version": "test", "protocol": 1})
	if caps, _ := hello["capabilities"].([]any); !slices.Contains(caps, any("fork-server")) {
		t.Fatalf("no fork-server in the hello: %v", hello)
	}
	if s := readPoolStarts(t, file); s.spawn != 0 {
		problems = append(problems, fmt.Sprintf("workers started at hello: %v", s.events))
	}

	// The handed worker takes the three named pipes and shakes hands on
	// them, as a newly started process.
	paths := [3]string{filepath.Join(dir, "stdin"), filepath.Join(dir, "stdout"), filepath.Join(dir, "stderr")}
	for _, p := range paths {
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	forked := ask(map[string]any{"type": "fork", "stdin": paths[0], "stdout": paths[1], "stderr": paths[2]})
	handed, _ := forked["pid"].(float64)
	if forked["type"] != "forked" || handed <= 0 {
		t.Fatalf("the answer to fork: %v", forked)
	}
	shook := make(chan string, 1)
	go func() { shook <- handshakeOn(paths) }()
	select {
	case answer := <-shook:
		if !strings.Contains(answer, `"type":"hello"`) {
			problems = append(problems, fmt.Sprintf("the handed worker's answer to hello on its pipes: %q", answer))
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("the handed worker %d did not shake hands on its pipes within 60 s", int(handed))
	}

	// The worker started ahead: wait for its imports, then look at it.
	var ahead int
	deadline := time.Now().Add(60 * time.Second)
	for ahead == 0 && time.Now().Before(deadline) {
		for _, e := range readPoolStarts(t, file).events {
			if e.kind == "worker" && e.pid != int(handed) {
				ahead = e.pid
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	if ahead == 0 {
		t.Fatalf("no worker started ahead within 60 s: %v", readPoolStarts(t, file).events)
	}
	// A worker that outlives this test (the orphan mistake) ends with it.
	t.Cleanup(func() { syscall.Kill(ahead, syscall.SIGKILL) })
	for _, pid := range []int{int(handed), ahead} {
		if pgid, err := syscall.Getpgid(pid); err != nil || pgid != pid {
			problems = append(problems, fmt.Sprintf("worker %d: process group %d (%v), want its own", pid, pgid, err))
			break
		}
	}
	serverOut, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/1", cmd.Process.Pid))
	workerOut, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/1", ahead))
	if err != nil || workerOut == serverOut || workerOut != os.DevNull {
		problems = append(problems, fmt.Sprintf("the waiting worker's stdout is %q (%v), the server's %q: want %s", workerOut, err, serverOut, os.DevNull))
	}

	// The server dies: its stdout ends at once (no worker holds it), and
	// the worker waiting for a fork exits.
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	rest := make(chan []byte, 1)
	go func() { data, _ := io.ReadAll(lines); rest <- data }()
	select {
	case data := <-rest:
		if len(data) > 0 {
			problems = append(problems, fmt.Sprintf("the server's stdout carried more than its answers: %q", data))
		}
	case <-time.After(10 * time.Second):
		problems = append(problems, "the server's stdout is still open 10 s after its death: a worker holds it")
	}
	if alive := waitGone(ahead, 5*time.Second); alive != "" {
		problems = append(problems, fmt.Sprintf("worker %d outlived its server by 5 s: %s", ahead, alive))
	}
	return problems
}

// handshakeOn opens a handed worker's named pipes as the runner does
// (its stdin to write, its stdout and stderr to read), sends hello and
// returns the first line of the answer; closing the stdin ends the worker.
func handshakeOn(paths [3]string) string {
	in, err := os.OpenFile(paths[0], os.O_WRONLY, 0)
	if err != nil {
		return err.Error()
	}
	defer in.Close()
	out, err := os.Open(paths[1])
	if err != nil {
		return err.Error()
	}
	defer out.Close()
	logs, err := os.Open(paths[2])
	if err != nil {
		return err.Error()
	}
	go func() { io.Copy(io.Discard, logs); logs.Close() }()
	if _, err := in.WriteString(`{"type":"hello","suite":"polyloop-conform","suite_version":"test","protocol":1}` + "\n"); err != nil {
		return err.Error()
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		return fmt.Sprintf("%q: %v", line, err)
	}
	return line
}

// waitGone waits until pid has exited (gone, or a zombie nobody reaped);
// it returns the process's state line when it is still running.
func waitGone(pid int, limit time.Duration) string {
	var stat []byte
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		var err error
		stat, err = os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return ""
		}
		// pid (comm) S ...: the state follows the last ')'.
		if i := strings.LastIndexByte(string(stat), ')'); i > 0 && strings.HasPrefix(string(stat[i+1:]), " Z") {
			return ""
		}
	}
	return string(stat)
}

// TestPoolServer_explore: crash exploration through the pool gives the
// same verdicts as --no-fork and costs no more runtime starts than it,
// save the server and the worker each pool keeps ahead. The whole of
// resume.* under POLYLOOP_LONG=1, one small scenario otherwise.
func TestPoolServer_explore(t *testing.T) {
	// Two explorations of a Python pool; the fast tier pins the pool's
	// rules with TestPoolServer_startsOnFirstFork and _workers, and the
	// fork server's saving with TestForkServer_catchesANeverReplay.
	requireLong(t, "explores a Python pool and --no-fork side by side")
	t.Parallel()
	// A torn tail, a decoy, a phase and a NEVER intent: the pool's cases
	// without a whole-family sweep of a Python kernel twice over (CI's
	// time).
	sel := "resume.torn-tail-before-point,resume.crash-in-second-phase,resume.never-not-replayed"
	type outcome struct {
		starts poolStarts
		report []map[string]any
	}
	got := map[string]outcome{}
	for _, tc := range []struct {
		name  string
		env   []string
		flags []string
	}{
		{"pool", nil, nil},
		{"no fork", nil, []string{"--no-fork"}},
	} {
		impl, file := poolCommand(t, tc.env...)
		out := filepath.Join(t.TempDir(), "report.json")
		args := append([]string{"explore", "--impl", impl, "--carry", filepath.Dir(file), "--run", sel, "--handshake-timeout", "120s", "--format", "json", "--out", out}, tc.flags...)
		if code, stdout, errs := run(t, args...); code != ExitOK {
			t.Fatalf("%s: exit %d\n%s\n%s", tc.name, code, stdout, errs)
		}
		got[tc.name] = outcome{readPoolStarts(t, file), explored(t, out)}
	}
	pool, noFork := got["pool"], got["no fork"]
	if !reflect.DeepEqual(pool.report, noFork.report) {
		t.Errorf("the verdicts differ:\npool:      %v\n--no-fork: %v", pool.report, noFork.report)
	}
	const ahead = 1 // POOL_AHEAD's default
	// A pool's worker builds no machine of its own: the first fork that
	// asks for one (a run that journals, where the runner isolates) is
	// not seen on a machine, so that worker is killed and the pool starts
	// one more ahead; the runner then asks that server for no machine
	// (docs/protocol.md, Fork server). So each server may cost 1+ahead
	// more than its own start and the one ahead.
	refused := pool.starts.forked * (1 + ahead)
	limit := noFork.starts.total() + pool.starts.forked*(1+ahead) + refused
	t.Logf("%s: runtime starts: pool %d (%d from --impl, %d workers, %d fork servers), --no-fork %d",
		sel, pool.starts.total(), pool.starts.impl, pool.starts.spawn, pool.starts.forked, noFork.starts.total())
	if pool.starts.total() > limit || pool.starts.forked < 1 {
		t.Errorf("the pool started %d runtimes, --no-fork %d: want at most %d (one server, %d ahead and one refused machine with its replacement per fork server)",
			pool.starts.total(), noFork.starts.total(), limit, ahead)
	}
	if early := pool.starts.early(); len(early) > 0 {
		t.Errorf("%q", early)
	}
}

// explored is a JSON report's scenarios without their durations: what two
// explorations of the same implementation must agree on.
func explored(t *testing.T, path string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Scenarios []map[string]any `json:"scenarios"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	for _, sc := range r.Scenarios {
		delete(sc, "duration_ns")
	}
	if len(r.Scenarios) == 0 {
		t.Fatalf("%s: no scenario explored", path)
	}
	return r.Scenarios
}
