package isolate

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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
	start := cmd.Start
	if wrap {
		m := Wrap(cmd, Options{})
		if m == nil {
			t.Skip("no isolation on this machine")
		}
		start = m.Start
	}
	if err := start(); err != nil {
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

// machineRun runs script with sh on a new machine that carries carry and
// returns its output and the parts the init built.
func machineRun(t testing.TB, script string, o Options) (string, []string) {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", script)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	m := Wrap(cmd, o)
	if m == nil {
		t.Skip("no isolation on this machine")
	}
	if err := m.Start(); err != nil {
		if errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EINVAL) {
			t.Skipf("the kernel refuses the namespaces here: %v", err)
		}
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	return out.String(), m.Parts()
}

// TestMachine: each part the init says it built holds. A file the
// runner's /dev/shm holds is absent; what the machine writes in its
// working directory, $HOME, /tmp, /var/tmp and /etc reaches neither the
// runner nor a second machine; what it writes in a carried directory
// does; /proc shows the machine alone; lo is up.
func TestMachine(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    Options
	}{{"user namespace", Options{}}, {"no user namespace", Options{NoUserNS: true}}} {
		t.Run(tc.name, func(t *testing.T) { checkMachine(t, tc.o) })
	}
}

// checkMachine is TestMachine on a machine built as o says.
func checkMachine(t *testing.T, o Options) {
	tag := "polyloop-isolate-test-" + strconv.Itoa(os.Getpid())
	for _, mark := range []string{"/dev/shm/" + tag, "/tmp/" + tag} {
		if err := os.WriteFile(mark, []byte("x"), 0o600); err != nil {
			t.Skipf("cannot write %s here: %v", mark, err)
		}
		defer os.Remove(mark)
	}
	volume := t.TempDir()
	home, _ := os.UserHomeDir()
	places := []string{"./." + tag, home + "/." + tag, "/var/tmp/" + tag, "/etc/" + tag, "/tmp/" + tag + "-w"}
	// The content is a word no error message of cat holds.
	write := "echo kept > " + strings.Join(places, "; echo kept > ") + "; echo kept > " + volume + "/carried"
	look := `ls -A /dev/shm; echo procs=$(ls -d /proc/[0-9]* | wc -l); cat /sys/class/net/lo/flags; ls -A ` + volume + `; cat ` + strings.Join(places, " ") + ` 2>/dev/null | grep -c kept || true`
	out, parts := machineRun(t, write+"; "+look, Options{Carry: []string{volume}, NoUserNS: o.NoUserNS})
	t.Logf("parts %v\n%s", parts, out)
	second, _ := machineRun(t, look, Options{Carry: []string{volume}, NoUserNS: o.NoUserNS})
	for _, p := range places {
		if _, err := os.Stat(p); err == nil {
			os.Remove(p)
			if slices.Contains(parts, PartFiles) {
				t.Errorf("%s, written on the machine, reached the runner", p)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(volume, "carried")); err != nil {
		t.Errorf("a file written in the carried directory did not reach the runner: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(second), "\n")
	want := map[string][]string{
		PartIPC:     {"", ""},        // /dev/shm empty
		PartFiles:   {"", "0"},       // /tmp empty; no place written
		PartProc:    {"procs=", ""},  // few processes
		PartNetwork: {"0x9", ""},     // lo up and loopback
		PartMount:   {"carried", ""}, // the carried directory
	}
	for part, w := range want {
		if !slices.Contains(parts, part) {
			continue
		}
		if !machineSaw(lines, part, w[0], w[1]) {
			t.Errorf("the part %q was reported built, but a second machine saw\n%s", part, second)
		}
	}
	if o.NoUserNS && slices.Contains(parts, PartKeyring) {
		t.Errorf("a machine without a user namespace claims a keyring of its own: %v", parts)
	}
}

// machineSaw checks one part against the lines TestMachine's look printed
// (in order: /dev/shm, procs, lo's flags, the carried directory, the
// count of written places), each empty listing being absent.
func machineSaw(lines []string, part, a, b string) bool {
	has := func(s string) bool { return slices.Contains(lines, s) }
	switch part {
	case PartIPC, PartFiles:
		for _, l := range lines {
			if strings.HasPrefix(l, "polyloop-isolate-test-") {
				return false
			}
		}
		return part == PartIPC || has(b)
	case PartProc:
		for _, l := range lines {
			if n, ok := strings.CutPrefix(l, a); ok {
				count, _ := strconv.Atoi(n)
				return count > 0 && count < 5
			}
		}
		return false
	default:
		return has(a)
	}
}

// TestMachine_mask: a masked directory is empty on the machine but for
// the carried directory below it, the way a resuming process sees the
// runner's volume: its own journal and nothing else.
func TestMachine_mask(t *testing.T) {
	volume := t.TempDir()
	for _, d := range []string{"other-run", "mine"} {
		if err := os.Mkdir(filepath.Join(volume, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	out, parts := machineRun(t, "ls -A "+volume, Options{Mask: []string{volume}, Carry: []string{filepath.Join(volume, "mine")}})
	if !slices.Contains(parts, PartFiles) {
		t.Skipf("no files of its own on this machine: %v", parts)
	}
	if got := strings.TrimSpace(out); got != "mine" {
		t.Errorf("the masked volume on the machine holds\n%s\nwant only the carried directory mine", got)
	}
}

// BenchmarkStart: the cost of a machine per process start (and so per
// resume): a shell that exits at once, plain, on a machine, and on a
// machine without a user namespace (the fallback).
func BenchmarkStart(b *testing.B) {
	for _, tc := range []struct {
		name string
		wrap bool
		o    Options
	}{{"plain", false, Options{}}, {"machine", true, Options{}}, {"machine-no-userns", true, Options{NoUserNS: true}}} {
		b.Run(tc.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				cmd := exec.Command("/bin/sh", "-c", "exit 0")
				start := cmd.Start
				if tc.wrap {
					m := Wrap(cmd, tc.o)
					if m == nil {
						b.Skip("no isolation on this machine")
					}
					start = m.Start
				}
				if err := start(); err != nil {
					b.Skip(err)
				}
				if err := cmd.Wait(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestShareVolume: a mount the runner makes below a shared volume after a
// machine started (a FUSE journal, issue 51; a tmpfs here) reaches the
// machine through its carried bind. Without ShareVolume it does not on a
// machine whose root is private (the control).
func TestShareVolume(t *testing.T) {
	for _, share := range []bool{true, false} {
		t.Run(map[bool]string{true: "shared", false: "private"}[share], func(t *testing.T) {
			volume := t.TempDir()
			if share {
				undo, err := ShareVolume(volume)
				if err != nil {
					t.Skipf("no privilege to share a mount here: %v", err)
				}
				defer undo()
			}
			sub := filepath.Join(volume, "journal")
			if err := os.Mkdir(sub, 0o755); err != nil {
				t.Fatal(err)
			}
			// The machine waits for the runner's mount, then looks.
			cmd := exec.Command("/bin/sh", "-c", "while [ ! -e "+volume+"/go ]; do sleep 0.02; done; cat "+sub+"/mark 2>&1")
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			m := Wrap(cmd, Options{Carry: []string{volume}})
			if m == nil {
				t.Skip("no isolation on this machine")
			}
			if err := m.Start(); err != nil {
				t.Skipf("the kernel refuses the namespaces here: %v", err)
			}
			defer cmd.Wait()
			if err := syscall.Mount("tmpfs", sub, "tmpfs", 0, ""); err != nil {
				cmd.Process.Kill()
				t.Skipf("no privilege to mount here: %v", err)
			}
			defer syscall.Unmount(sub, syscall.MNT_DETACH)
			os.WriteFile(filepath.Join(sub, "mark"), []byte("mounted later"), 0o644)
			os.WriteFile(filepath.Join(volume, "go"), nil, 0o644)
			cmd.Wait()
			if got := strings.Contains(out.String(), "mounted later"); got != share {
				t.Errorf("the machine saw the later mount: %v, want %v\n%s", got, share, out.String())
			}
		})
	}
}
