package atomicfile

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestOutput: a user's --out is a file replaced atomically, a link whose
// file is replaced (the link kept), a device or FIFO written through and
// never replaced, and a directory refused before any work.
func TestOutput(t *testing.T) {
	dir := t.TempDir()
	if err := CheckOutput(dir); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("a directory: %v", err)
	}
	real := filepath.Join(dir, "real.json")
	link := filepath.Join(dir, "link.json")
	os.WriteFile(real, []byte("old"), 0o644)
	os.Symlink("real.json", link)
	if err := CheckOutput(link); err != nil {
		t.Fatal(err)
	}
	if err := Output(link, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v %v", st.Mode(), err)
	}
	if b, _ := os.ReadFile(real); string(b) != "new" {
		t.Errorf("the linked file holds %q", b)
	}
	dangling := filepath.Join(dir, "dangling.json")
	os.Symlink("nowhere/x.json", dangling)
	if err := CheckOutput(dangling); err == nil {
		t.Error("a dangling link passed the check")
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	if err := CheckOutput(fifo); err != nil {
		t.Fatal(err)
	}
	got := make(chan string)
	go func() {
		b, _ := os.ReadFile(fifo)
		got <- string(b)
	}()
	if err := Output(fifo, []byte("through")); err != nil {
		t.Fatal(err)
	}
	if s := <-got; s != "through" {
		t.Errorf("the FIFO's reader got %q", s)
	}
	if st, err := os.Lstat(fifo); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced: %v", st.Mode())
	}
	// A device that refuses the write is an error, and stays a device.
	if _, err := os.Stat("/dev/full"); err == nil {
		if err := Output("/dev/full", []byte("x")); err == nil {
			t.Error("writing /dev/full succeeded")
		}
		if st, err := os.Lstat("/dev/full"); err != nil || st.Mode()&os.ModeCharDevice == 0 {
			t.Errorf("/dev/full is no longer a device: %v", st.Mode())
		}
	}
}
