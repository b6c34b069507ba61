package polyloopkit

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/polyloop/polyloop-conform/trajectories"
)

const helperMain = "POLYLOOPKIT_HELPER_MAIN"

// TestHelperMain is Main in a child test binary: TestMain_forkPool starts it.
func TestHelperMain(t *testing.T) {
	if os.Getenv(helperMain) == "" {
		t.Skip("started by TestMain_forkPool only")
	}
	Main(Kernel{Name: "pool-probe", Capabilities: []string{"json-actions"},
		Run: func(context.Context, Spec, *Seams) (*trajectories.Trajectory, error) { return nil, nil }})
}

// Main offers the fork server as a pool: a fork hands over a worker that
// leads a process group of its own and speaks the protocol on the fork's
// pipes, and the worker kept ahead exits when the server dies.
func TestMain_forkPool(t *testing.T) {
	dir := t.TempDir()
	var fifo [3]string
	for i, n := range []string{"stdin", "stdout", "stderr"} {
		fifo[i] = filepath.Join(dir, n)
		if err := syscall.Mkfifo(fifo[i], 0o600); err != nil {
			t.Skip("no named pipes here:", err)
		}
	}
	server := exec.Command(os.Args[0], "-test.run=^TestHelperMain$")
	server.Env = append(os.Environ(), helperMain+"=1")
	toServer, _ := server.StdinPipe()
	fromServer, _ := server.StdoutPipe()
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	defer server.Process.Kill()
	lines := bufio.NewScanner(fromServer)
	say := func(w interface{ Write([]byte) (int, error) }, line string) { w.Write([]byte(line + "\n")) }
	say(toServer, `{"type":"hello","suite":"polyloop-conform","suite_version":"0","protocol":1}`)
	var hello Hello
	if !lines.Scan() || json.Unmarshal(lines.Bytes(), &hello) != nil || !slices.Contains(hello.Capabilities, "fork-server") {
		t.Fatalf("the server's hello does not offer fork-server: %s", lines.Bytes())
	}
	paths, _ := json.Marshal(Fork{Type: "fork", Stdin: fifo[0], Stdout: fifo[1], Stderr: fifo[2]})
	say(toServer, string(paths))
	opened := make(chan *os.File, 3)
	for i, flag := range []int{os.O_WRONLY, os.O_RDONLY, os.O_RDONLY} {
		go func() { f, _ := os.OpenFile(fifo[i], flag, 0); opened <- f }()
	}
	var forked Forked
	if !lines.Scan() || json.Unmarshal(lines.Bytes(), &forked) != nil || forked.Pid <= 0 {
		t.Fatalf("no forked answer: %s", lines.Bytes())
	}
	files := map[string]*os.File{}
	for range 3 {
		f := <-opened
		files[f.Name()] = f
	}
	if pgid, err := syscall.Getpgid(forked.Pid); err != nil || pgid != forked.Pid {
		t.Errorf("worker %d is in process group %d (%v), not one of its own", forked.Pid, pgid, err)
	}
	say(files[fifo[0]], `{"type":"hello","suite":"polyloop-conform","suite_version":"0","protocol":1}`)
	worker := bufio.NewScanner(files[fifo[1]])
	if !worker.Scan() || !strings.Contains(worker.Text(), `"name":"pool-probe"`) {
		t.Fatalf("the handed-over worker does not answer hello on the fork's pipes: %q", worker.Text())
	}
	ahead := slices.DeleteFunc(children(server.Process.Pid), func(pid int) bool { return pid == forked.Pid })
	if len(ahead) != 1 {
		t.Fatalf("the server keeps %d workers ahead, want 1", len(ahead))
	}
	toServer.Close()
	server.Wait()
	for deadline := time.Now().Add(5 * time.Second); alive(ahead[0]); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			syscall.Kill(ahead[0], syscall.SIGKILL)
			t.Fatalf("the worker kept ahead (%d) outlived its server", ahead[0])
		}
	}
	files[fifo[0]].Close()
}

// children are a process's child pids (Linux /proc).
func children(pid int) []int {
	var out []int
	tasks, _ := filepath.Glob(filepath.Join("/proc", strconv.Itoa(pid), "task", "*", "children"))
	for _, f := range tasks {
		data, _ := os.ReadFile(f)
		for _, s := range strings.Fields(string(data)) {
			n, _ := strconv.Atoi(s)
			out = append(out, n)
		}
	}
	return out
}

// alive says whether pid runs (a zombie left to an init that does not
// reap counts as gone).
func alive(pid int) bool {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(data), ") ")
	return !strings.HasPrefix(rest, "Z")
}
