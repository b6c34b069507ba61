// Package atomicfile writes files so that a reader never sees half of
// one: goldens, reports, recorded trajectories, transcripts, the upstream
// lock.
package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Write writes data to path through a temporary file in the same
// directory, synced, and a rename: a crash or Ctrl-C leaves either the old
// file or the new one, never half of one.
func Write(path string, data []byte) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("sync %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("rename into %s: %w", path, err)
	}
	return nil
}

// CheckOutput checks, before any work is done, that Output can write path:
// a directory is refused; a file (or a symbolic link to one) must be
// replaceable in its directory; a device, FIFO or socket is written
// through and is not opened here (opening a FIFO waits for its reader).
func CheckOutput(path string) error {
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if lst, lerr := os.Lstat(path); lerr == nil && lst.Mode()&os.ModeSymlink != 0 {
			return fmt.Errorf("%s is a symbolic link to nothing; point it at a file or give another path", path)
		}
		return Probe(path)
	case err != nil:
		return err
	case st.IsDir():
		return fmt.Errorf("%s is a directory; give a file name inside it, e.g. %s", path, filepath.Join(path, "report.json"))
	case st.Mode().IsRegular():
		real, err := filepath.EvalSymlinks(path)
		if err != nil {
			return err
		}
		return Probe(real)
	}
	return nil
}

// Output writes a user-named output (a report): a regular file, or the
// file a symbolic link points to, atomically with Write, keeping the link;
// a device, FIFO or socket is written through, never replaced (as root, a
// rename over /dev/full would replace the device node).
func Output(path string, data []byte) error {
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := CheckOutput(path); err != nil {
			return err
		}
		return Write(path, data)
	case err != nil:
		return err
	case st.IsDir():
		return CheckOutput(path)
	case st.Mode().IsRegular():
		real, err := filepath.EvalSymlinks(path)
		if err != nil {
			return err
		}
		return Write(real, data)
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}

// Probe checks that path's directory takes a new file, leaving nothing
// behind.
func Probe(path string) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".probe-*")
	if err != nil {
		return err
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}
