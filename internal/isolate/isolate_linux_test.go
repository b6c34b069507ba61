package isolate

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// findSleep returns the pids of processes whose command line is
// "sleep <arg>".
func findSleep(t *testing.T, arg string) []int {
	t.Helper()
	dirs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	var pids []int
	for _, d := range dirs {
		b, err := os.ReadFile(d)
		if err != nil || !bytes.Equal(b, []byte("sleep\x00"+arg+"\x00")) {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(d)))
		pids = append(pids, pid)
	}
	return pids
}

// startDaemon starts sh leaving a setsid sleep behind, wrapped when wrap
// is set, and waits for the sleep to appear.
func startDaemon(t *testing.T, arg string, wrap bool) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", "setsid sleep "+arg+" & wait")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if wrap && !Wrap(cmd) {
		t.Skip("no isolation on this machine")
	}
	if err := cmd.Start(); err != nil {
		if wrap && errors.Is(err, syscall.EPERM) {
			t.Skipf("the kernel refuses the namespaces here: %v", err)
		}
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); len(findSleep(t, arg)) == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the setsid sleep never started")
		}
	}
	return cmd
}

// TestWrap_killsDetached: a setsid child leaves the process group, so a
// group kill misses it (the control), but not the namespace's end.
func TestWrap_killsDetached(t *testing.T) {
	for _, tc := range []struct {
		name     string
		arg      string
		wrap     bool
		survives bool
	}{
		{"plain process group", "3127.25", false, true},
		{"namespaces", "3127.5", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := startDaemon(t, tc.arg, tc.wrap)
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			cmd.Wait()
			time.Sleep(200 * time.Millisecond)
			left := findSleep(t, tc.arg)
			for _, pid := range left {
				syscall.Kill(pid, syscall.SIGKILL) // the control's daemon
			}
			if got := len(left) > 0; got != tc.survives {
				t.Errorf("detached child alive after the kill: %v, want %v", got, tc.survives)
			}
		})
	}
}

// TestWrap_freshMemory: a wrapped process sees an empty /dev/shm and a
// TMPDIR in it, where a file the runner's namespace holds is absent.
func TestWrap_freshMemory(t *testing.T) {
	mark := filepath.Join("/dev/shm", "polyloop-isolate-test-"+strconv.Itoa(os.Getpid()))
	if err := os.WriteFile(mark, []byte("x"), 0o600); err != nil {
		t.Skipf("no /dev/shm here: %v", err)
	}
	defer os.Remove(mark)
	cmd := exec.Command("/bin/sh", "-c", `ls -A /dev/shm; echo "TMPDIR=$TMPDIR"`)
	if !Wrap(cmd) {
		t.Skip("no isolation on this machine")
	}
	out, err := cmd.CombinedOutput()
	if errors.Is(err, syscall.EPERM) {
		t.Skipf("the kernel refuses the namespaces here: %v", err)
	}
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if got := strings.TrimSpace(string(out)); got != "tmp\nTMPDIR=/dev/shm/tmp" {
		t.Errorf("the isolated process saw\n%s\nwant only its own tmp and TMPDIR=/dev/shm/tmp", got)
	}
}

// BenchmarkStart: the cost of isolation per process start (and so per
// resume): a shell that exits at once, with and without the namespaces.
func BenchmarkStart(b *testing.B) {
	for _, wrap := range []bool{false, true} {
		b.Run(map[bool]string{false: "plain", true: "isolated"}[wrap], func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				cmd := exec.Command("/bin/sh", "-c", "exit 0")
				if wrap && !Wrap(cmd) {
					b.Skip("no isolation on this machine")
				}
				if err := cmd.Run(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
