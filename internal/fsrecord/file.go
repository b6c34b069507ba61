package fsrecord

import (
	"context"
	"slices"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// file is an open file: its writes and syncs are recorded. It offers no
// passthrough descriptor, so every read and write comes to the recorder.
type file struct {
	n  *node
	fh fs.FileHandle
}

var (
	_ fs.FileReader    = (*file)(nil)
	_ fs.FileWriter    = (*file)(nil)
	_ fs.FileFlusher   = (*file)(nil)
	_ fs.FileReleaser  = (*file)(nil)
	_ fs.FileFsyncer   = (*file)(nil)
	_ fs.FileGetattrer = (*file)(nil)
	_ fs.FileSetattrer = (*file)(nil)
	_ fs.FileLseeker   = (*file)(nil)
	_ fs.FileAllocater = (*file)(nil)
)

func (f *file) Read(ctx context.Context, buf []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	return f.fh.(fs.FileReader).Read(ctx, buf, off)
}

func (f *file) Write(ctx context.Context, data []byte, off int64) (uint32, syscall.Errno) {
	n, errno := f.fh.(fs.FileWriter).Write(ctx, data, off)
	if n > 0 {
		f.n.r.record(ctx, Op{Kind: Write, Path: f.n.rel(), Offset: off, Data: slices.Clone(data[:n])})
	}
	return n, errno
}

func (f *file) Flush(ctx context.Context) syscall.Errno {
	return f.fh.(fs.FileFlusher).Flush(ctx)
}

func (f *file) Release(ctx context.Context) syscall.Errno {
	return f.fh.(fs.FileReleaser).Release(ctx)
}

// Fsync records the sync (fsync and fdatasync alike: both make the data
// durable, and a record's size with it); the backing file is not synced.
func (f *file) Fsync(ctx context.Context, flags uint32) syscall.Errno {
	f.n.r.record(ctx, Op{Kind: Sync, Path: f.n.rel()})
	return 0
}

func (f *file) Getattr(ctx context.Context, out *fuse.AttrOut) syscall.Errno {
	return f.fh.(fs.FileGetattrer).Getattr(ctx, out)
}

func (f *file) Setattr(ctx context.Context, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	return f.fh.(fs.FileSetattrer).Setattr(ctx, in, out)
}

func (f *file) Lseek(ctx context.Context, off uint64, whence uint32) (uint64, syscall.Errno) {
	return f.fh.(fs.FileLseeker).Lseek(ctx, off, whence)
}

// Allocate records a growth of the file as a size change: fallocate
// without FALLOC_FL_KEEP_SIZE extends it with zeros.
func (f *file) Allocate(ctx context.Context, off, size uint64, mode uint32) syscall.Errno {
	var before fuse.AttrOut
	f.Getattr(ctx, &before)
	errno := f.fh.(fs.FileAllocater).Allocate(ctx, off, size, mode)
	var after fuse.AttrOut
	if errno == 0 && f.Getattr(ctx, &after) == 0 && after.Size > before.Size {
		f.n.r.record(ctx, Op{Kind: Truncate, Path: f.n.rel(), Size: int64(after.Size)})
	}
	return errno
}
