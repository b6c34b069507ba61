package fsrecord

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRecorder: what another process does to files under a watched
// directory reaches the recorder as the file system sees it, in order,
// whatever call made it: a sendfile and a store through a shared mapping
// arrive as writes, msync as a sync; a syncfs reaches no FUSE file system
// on Linux (the kernel sends FUSE_SYNCFS to virtiofs only), so none is
// recorded here (the machine's init tells the runner of it instead:
// SyncedBy); the runner's own calls are not the implementation's.
func TestRecorder(t *testing.T) {
	if err := Available(); err != nil {
		t.Skip(err)
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("the recorder's test drives it from another process, python3, which is missing")
	}
	parent := t.TempDir()
	r, err := Mount(filepath.Join(parent, "mnt"), filepath.Join(parent, "backing"))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Unmount()
	calls := 0
	w := r.Watch("j", func() int { calls++; return calls })
	script := `
import ctypes, mmap, os, sys
d = sys.argv[1]
os.mkdir(d)
fd = os.open(d + "/a", os.O_CREAT | os.O_WRONLY | os.O_APPEND, 0o644)
os.write(fd, b"one\n")
os.fdatasync(fd)
ctypes.CDLL(None).syncfs(fd)
os.close(fd)
dfd = os.open(d, os.O_RDONLY); os.fsync(dfd); os.close(dfd)
src = os.open(d + "/a", os.O_RDONLY)
dst = os.open(d + "/b", os.O_CREAT | os.O_WRONLY, 0o644)
os.sendfile(dst, src, 0, 4); os.close(dst); os.close(src)
fd = os.open(d + "/m", os.O_CREAT | os.O_RDWR, 0o644)
os.ftruncate(fd, 4096)
m = mmap.mmap(fd, 4096); m[0:3] = b"map"; m.flush(); m.close(); os.close(fd)
os.rename(d + "/b", d + "/c")
os.unlink(d + "/c")
`
	cmd := exec.Command(py, "-S", "-c", script, filepath.Join(r.Mountpoint(), "j"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	// The runner's own removal is not recorded.
	if err := os.Remove(filepath.Join(r.Mountpoint(), "j", "a")); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, op := range w.Stop() {
		s := op.Kind + " " + op.Path
		if op.To != "" {
			s += " " + op.To
		}
		if op.Kind == Write {
			s += " " + strings.TrimRight(string(op.Data), "\x00")
		}
		got = append(got, s)
	}
	want := []string{"mkdir .", "create a", "write a one\n", "sync a", "sync_dir .", "create b", "write b one\n",
		"create m", "truncate m", "write m map", "sync m", "rename b c", "unlink c"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("recorded\n%q\nwant\n%q", got, want)
	}
}

// TestRecorder_syncedBy: a syncfs or sync the runner hears of (the kernel
// sends FUSE neither) is recorded in the one sequence, after the writes
// before it, in the watches the caller's machine wrote in and no other:
// never in a concurrent run's, never from a machine that wrote nothing.
func TestRecorder_syncedBy(t *testing.T) {
	if err := Available(); err != nil {
		t.Skip(err)
	}
	parent := t.TempDir()
	r, err := Mount(filepath.Join(parent, "mnt"), filepath.Join(parent, "backing"))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Unmount()
	mine := r.Watch("j", func() int { return 1 })
	other := r.Watch("k", func() int { return 2 })
	// A child writes in j; the runner's own calls are not recorded.
	cmd := exec.Command("/bin/sh", "-c", "mkdir $0 && echo one > $0/a", filepath.Join(r.Mountpoint(), "j"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	machine, err := os.Readlink("/proc/self/ns/pid") // the child's too
	if err != nil {
		t.Fatal(err)
	}
	r.SyncedBy("pid:[1]") // a machine that wrote nothing here
	r.SyncedBy(machine)
	got, rest := mine.Stop(), other.Stop()
	if len(rest) != 0 {
		t.Errorf("a watch no process wrote in recorded %+v", rest)
	}
	if len(got) < 2 || got[len(got)-1].Kind != SyncFS || got[len(got)-1].Seq <= got[len(got)-2].Seq || got[len(got)-1].Wire != 1 {
		t.Fatalf("recorded %+v, want the writes then one sync_fs after them", got)
	}
	for _, op := range got[:len(got)-1] {
		if op.Kind == SyncFS {
			t.Errorf("a sync from a machine that wrote nothing here was recorded: %+v", got)
		}
	}
}
