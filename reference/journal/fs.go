package journal

import (
	"io"
	"os"
)

// FS is the file system a journal goes through. OS is the real one; a
// test can pass one that records every write and sync, to replay the
// states a power cut could leave (internal/powerloss). The operations are
// the few the journal needs, so a model of them stays small.
type FS interface {
	// MkdirAll creates a run directory and its parents.
	MkdirAll(dir string) error
	// Create makes a new, empty file for appending; it fails when the
	// file exists.
	Create(path string) (File, error)
	// OpenWrite opens an existing file for writing at a given offset.
	OpenWrite(path string) (File, error)
	// ReadFile returns a file's contents.
	ReadFile(path string) ([]byte, error)
	// SyncDir makes a directory's entries durable (fsync of the
	// directory), so a new file survives a power cut.
	SyncDir(dir string) error
}

// File is a journal file opened for writing.
type File interface {
	io.Writer
	// Sync makes everything written so far durable (fsync).
	Sync() error
	Truncate(size int64) error
	Seek(offset int64, whence int) (int64, error)
	Close() error
}

// OS is the operating system's file system.
var OS FS = osFS{}

type osFS struct{}

func (osFS) MkdirAll(dir string) error { return os.MkdirAll(dir, 0o755) }

func (osFS) Create(path string) (File, error) {
	return os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY|os.O_APPEND, 0o644)
}

func (osFS) OpenWrite(path string) (File, error) { return os.OpenFile(path, os.O_WRONLY, 0o644) }

func (osFS) ReadFile(path string) ([]byte, error) { return os.ReadFile(path) }

func (osFS) SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
