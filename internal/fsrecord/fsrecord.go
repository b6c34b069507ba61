// Package fsrecord is a file system of the runner's own that records what
// reaches it. Mounted with FUSE over a journal's directory, it passes
// every call through to a backing directory and keeps, in one order, each
// write, sync, rename, truncation, creation and removal as the file system
// sees it, from every process, whatever system call made it: a write
// through a shared mapping, sendfile, copy_file_range and splice all
// arrive as writes, and a process sees no tracer. In the manner of LazyFS
// (Pereira et al.), the recording is what a power cut is cut from
// (internal/powerloss); unlike LazyFS it keeps no page cache of its own:
// the backing directory is scratch, and what is durable is decided from
// the order of the calls, not from a cache.
//
// The kernel sends FUSE no syncfs and no sync (virtiofs only hears of
// them): the machine's init stops them for the runner (internal/isolate),
// which records them here through SyncedBy.
//
// Each write reaches it: the mount asks for no writeback cache, so the
// kernel sends a write when the process makes it (a shared mapping's
// stores when the kernel writes the pages back: on msync, fsync, close or
// after its writeback delay).
package fsrecord

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// Kinds of Op.
const (
	Create   = "create"   // Path made, empty
	Mkdir    = "mkdir"    // Path made, a directory
	Write    = "write"    // Data written to Path at Offset
	Sync     = "sync"     // fsync or fdatasync of the file Path
	SyncDir  = "sync_dir" // fsync of the directory Path
	SyncFS   = "sync_fs"  // a syncfs of the file system, or a sync (SyncedBy)
	Truncate = "truncate" // Path's size set to Size
	Rename   = "rename"   // Path moved to To
	Unlink   = "unlink"   // Path removed
	Rmdir    = "rmdir"    // the directory Path removed
	Link     = "link"     // To made a second name of Path
	Symlink  = "symlink"  // Path made, a symbolic link
)

// Op is one call the file system completed, in the order it completed.
type Op struct {
	Seq    int // position in the recorder's one sequence
	Kind   string
	Path   string // relative to the watched directory
	To     string
	Data   []byte
	Offset int64
	Size   int64
	// Wire is what the watcher's wire function said when the call
	// arrived: how much of the wire the runner had seen by then.
	Wire int
}

// Available says, in one sentence, why a recorder cannot be mounted here,
// or nil.
func Available() error {
	f, err := os.OpenFile("/dev/fuse", os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("the file-system recorder needs /dev/fuse, which cannot be opened here (%v)", err)
	}
	f.Close()
	if os.Geteuid() != 0 {
		return errors.New("the file-system recorder mounts FUSE directly, which needs root (or CAP_SYS_ADMIN)")
	}
	return nil
}

// Recorder is one mounted file system and what it recorded.
type Recorder struct {
	mountpoint, backing string
	server              *fuse.Server

	self    int    // the runner's process id
	dev     uint64 // the mount's device (st_dev), as the machines see it
	mu      sync.Mutex
	seq     int
	watches map[string]*Watch
}

// Watch is the recording of one directory under the mount: every call on
// a path inside it.
type Watch struct {
	r    *Recorder
	dir  string // relative to the mount
	wire func() int
	ops  []Op
	// machines are the PID namespaces of the processes whose calls
	// landed here: a sync made on one of them syncs this watch (SyncedBy).
	machines map[string]bool
}

// Mount mounts a recorder at mountpoint (made if missing), passing through
// to backing (made if missing). Unmount ends it.
func Mount(mountpoint, backing string) (*Recorder, error) {
	for _, d := range []string{mountpoint, backing} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	r := &Recorder{mountpoint: mountpoint, backing: backing, self: os.Getpid(), watches: map[string]*Watch{}}
	var st syscall.Stat_t
	if err := syscall.Stat(backing, &st); err != nil {
		return nil, err
	}
	root := &fs.LoopbackRoot{Path: backing, Dev: uint64(st.Dev)}
	rootNode := &node{LoopbackNode: &fs.LoopbackNode{RootData: root}, r: r}
	root.RootNode = rootNode
	// No cache of names or attributes: the runner fills a resumed
	// process's journal in the backing directory, which the kernel must
	// see at once.
	var zero time.Duration
	opts := &fs.Options{
		MountOptions: fuse.MountOptions{DirectMount: true, DirectMountStrict: true, AllowOther: true,
			FsName: "journal", Name: "journal", DisableXAttrs: true, MaxWrite: 1 << 20},
		EntryTimeout: &zero, AttrTimeout: &zero, NegativeTimeout: &zero,
	}
	server, err := fs.Mount(mountpoint, rootNode, opts)
	if err != nil {
		return nil, fmt.Errorf("mount the file-system recorder at %s: %w", mountpoint, err)
	}
	r.server = server
	if err := syscall.Stat(mountpoint, &st); err != nil {
		r.Unmount()
		return nil, err
	}
	r.dev = uint64(st.Dev)
	return r, nil
}

// Mountpoint is where the recorder is mounted.
func (r *Recorder) Mountpoint() string { return r.mountpoint }

// Dev is the mount's device number (st_dev): a syncfs of a descriptor on
// this device is a syncfs of the recorder.
func (r *Recorder) Dev() uint64 { return r.dev }

// Backing is the directory the mount passes through to: what is written
// there is seen through the mount at once, unrecorded.
func (r *Recorder) Backing() string { return r.backing }

// Unmount ends the mount; a busy mount is detached lazily.
func (r *Recorder) Unmount() error {
	err := r.server.Unmount()
	if err != nil {
		err = syscall.Unmount(r.mountpoint, syscall.MNT_DETACH)
	}
	r.server.Wait()
	return err
}

// Watch starts recording the calls on paths under dir (relative to the
// mount); wire is asked, for each call, how much of the wire the runner
// has seen.
func (r *Recorder) Watch(dir string, wire func() int) *Watch {
	r.mu.Lock()
	defer r.mu.Unlock()
	w := &Watch{r: r, dir: filepath.Clean(dir), wire: wire, machines: map[string]bool{}}
	r.watches[w.dir] = w
	return w
}

// Stop ends the watch and returns what it recorded, in order.
func (w *Watch) Stop() []Op {
	w.r.mu.Lock()
	defer w.r.mu.Unlock()
	delete(w.r.watches, w.dir)
	return w.ops
}

// Ops returns what the watch recorded so far.
func (w *Watch) Ops() []Op {
	w.r.mu.Lock()
	defer w.r.mu.Unlock()
	return append([]Op(nil), w.ops...)
}

// record appends op to the watch its path falls under, if any, and notes
// the caller's machine there. The runner's own calls (removing a journal
// it handed over) are not the implementation's, and are not recorded.
func (r *Recorder) record(ctx context.Context, op Op) {
	machine := ""
	if c, ok := fuse.FromContext(ctx); ok {
		if r.own(c.Pid) {
			return
		}
		machine = pidNS(int(c.Pid))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seq++
	op.Seq = r.seq
	for _, w := range r.watches {
		rel, ok := inside(op.Path, w.dir)
		to, toOK := inside(op.To, w.dir)
		if !ok && !toOK {
			continue
		}
		o := op
		o.Path, o.To = rel, to
		if !ok {
			o.Path = "" // moved in from outside the watch
		}
		o.Wire = w.wire()
		w.ops = append(w.ops, o)
		if machine != "" {
			w.machines[machine] = true
		}
	}
}

// SyncedBy records a syncfs of the recorder, or a sync, made on the
// machine whose PID namespace is machine (isolate.SyncCall.PidNS), in
// the one sequence of the file system's calls: the caller waits until it
// is recorded, so its place among the writes and on the wire holds. It
// reaches each watch that machine's processes wrote in, and no other: a
// machine syncs its own disk, never a concurrent run's.
func (r *Recorder) SyncedBy(machine string) {
	if machine == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seq++
	for _, w := range r.watches {
		if w.machines[machine] {
			w.ops = append(w.ops, Op{Seq: r.seq, Kind: SyncFS, Wire: w.wire()})
		}
	}
}

// pidNS is the PID namespace of the thread tid (its /proc ns link), "" if
// it cannot be read (a kernel thread writing pages back, a thread gone).
func pidNS(tid int) string {
	if tid <= 0 {
		return ""
	}
	ns, err := os.Readlink("/proc/" + strconv.Itoa(tid) + "/ns/pid")
	if err != nil {
		return ""
	}
	return ns
}

// own reports whether the thread tid (FUSE names the calling thread, not
// its process) is one of the runner's.
func (r *Recorder) own(tid uint32) bool {
	if int(tid) == r.self {
		return true
	}
	_, err := os.Stat("/proc/self/task/" + strconv.Itoa(int(tid)))
	return err == nil
}

// inside returns p relative to dir, if p is dir or under it.
func inside(p, dir string) (string, bool) {
	if p == "" {
		return "", false
	}
	if p == dir {
		return ".", true
	}
	if rest, ok := strings.CutPrefix(p, dir+"/"); ok {
		return rest, true
	}
	return "", false
}

// node is a passthrough node that records the calls that change the
// file system.
type node struct {
	*fs.LoopbackNode
	r *Recorder
}

var _ fs.NodeWrapChilder = (*node)(nil)

// WrapChild makes every node the loopback creates under this one a
// recording node too.
func (n *node) WrapChild(ctx context.Context, ops fs.InodeEmbedder) fs.InodeEmbedder {
	if lb, ok := ops.(*fs.LoopbackNode); ok {
		return &node{LoopbackNode: lb, r: n.r}
	}
	return ops
}

// rel is the node's path relative to the mount.
func (n *node) rel() string { return n.Path(nil) }

func (n *node) child(name string) string { return filepath.Join(n.rel(), name) }

var (
	_ fs.NodeCreater        = (*node)(nil)
	_ fs.NodeOpener         = (*node)(nil)
	_ fs.NodeMkdirer        = (*node)(nil)
	_ fs.NodeUnlinker       = (*node)(nil)
	_ fs.NodeRmdirer        = (*node)(nil)
	_ fs.NodeRenamer        = (*node)(nil)
	_ fs.NodeLinker         = (*node)(nil)
	_ fs.NodeSymlinker      = (*node)(nil)
	_ fs.NodeSetattrer      = (*node)(nil)
	_ fs.NodeFsyncer        = (*node)(nil)
	_ fs.NodeOpendirHandler = (*node)(nil)
)

func (n *node) Create(ctx context.Context, name string, flags, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	in, fh, fl, errno := n.LoopbackNode.Create(ctx, name, flags, mode, out)
	if errno != 0 {
		return in, fh, fl, errno
	}
	n.r.record(ctx, Op{Kind: Create, Path: n.child(name)})
	return in, &file{n: in.Operations().(*node), fh: fh}, fl, 0
}

func (n *node) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	fh, fl, errno := n.LoopbackNode.Open(ctx, flags)
	if errno != 0 {
		return fh, fl, errno
	}
	if flags&syscall.O_TRUNC != 0 {
		n.r.record(ctx, Op{Kind: Truncate, Path: n.rel()})
	}
	return &file{n: n, fh: fh}, fl, 0
}

func (n *node) Mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	in, errno := n.LoopbackNode.Mkdir(ctx, name, mode, out)
	if errno == 0 {
		n.r.record(ctx, Op{Kind: Mkdir, Path: n.child(name)})
	}
	return in, errno
}

func (n *node) Unlink(ctx context.Context, name string) syscall.Errno {
	p := n.child(name)
	errno := n.LoopbackNode.Unlink(ctx, name)
	if errno == 0 {
		n.r.record(ctx, Op{Kind: Unlink, Path: p})
	}
	return errno
}

func (n *node) Rmdir(ctx context.Context, name string) syscall.Errno {
	p := n.child(name)
	errno := n.LoopbackNode.Rmdir(ctx, name)
	if errno == 0 {
		n.r.record(ctx, Op{Kind: Rmdir, Path: p})
	}
	return errno
}

func (n *node) Rename(ctx context.Context, name string, newParent fs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	from := n.child(name)
	to := filepath.Join(newParent.EmbeddedInode().Path(nil), newName)
	errno := n.LoopbackNode.Rename(ctx, name, newParent, newName, flags)
	if errno == 0 {
		n.r.record(ctx, Op{Kind: Rename, Path: from, To: to})
	}
	return errno
}

func (n *node) Link(ctx context.Context, target fs.InodeEmbedder, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	from := target.EmbeddedInode().Path(nil)
	in, errno := n.LoopbackNode.Link(ctx, target, name, out)
	if errno == 0 {
		n.r.record(ctx, Op{Kind: Link, Path: from, To: n.child(name)})
	}
	return in, errno
}

func (n *node) Symlink(ctx context.Context, target, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	in, errno := n.LoopbackNode.Symlink(ctx, target, name, out)
	if errno == 0 {
		n.r.record(ctx, Op{Kind: Symlink, Path: n.child(name), Data: []byte(target)})
	}
	return in, errno
}

func (n *node) Setattr(ctx context.Context, f fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	if fh, ok := f.(*file); ok {
		f = fh.fh
	}
	errno := n.LoopbackNode.Setattr(ctx, f, in, out)
	if size, ok := in.GetSize(); ok && errno == 0 {
		n.r.record(ctx, Op{Kind: Truncate, Path: n.rel(), Size: int64(size)})
	}
	return errno
}

// Fsync is reached for a directory opened without a handle of ours, and
// for a file synced without an open handle.
func (n *node) Fsync(ctx context.Context, f fs.FileHandle, flags uint32) syscall.Errno {
	kind := Sync
	if n.IsDir() {
		kind = SyncDir
	}
	n.r.record(ctx, Op{Kind: kind, Path: n.rel()})
	return 0
}

func (n *node) OpendirHandle(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	ds, fl, errno := n.LoopbackNode.OpendirHandle(ctx, flags)
	if errno != 0 {
		return ds, fl, errno
	}
	return &dir{n: n, ds: ds}, fl, 0
}

// dir is an open directory: a sync of it is recorded.
type dir struct {
	n  *node
	ds fs.FileHandle
}

var (
	_ fs.FileReaddirenter = (*dir)(nil)
	_ fs.FileSeekdirer    = (*dir)(nil)
	_ fs.FileReleasedirer = (*dir)(nil)
	_ fs.FileFsyncdirer   = (*dir)(nil)
)

func (d *dir) Readdirent(ctx context.Context) (*fuse.DirEntry, syscall.Errno) {
	return d.ds.(fs.FileReaddirenter).Readdirent(ctx)
}

func (d *dir) Seekdir(ctx context.Context, off uint64) syscall.Errno {
	return d.ds.(fs.FileSeekdirer).Seekdir(ctx, off)
}

func (d *dir) Releasedir(ctx context.Context, flags uint32) {
	d.ds.(fs.FileReleasedirer).Releasedir(ctx, flags)
}

// Fsyncdir records the sync; the backing directory is scratch and is not
// synced (what is durable is decided from the recording).
func (d *dir) Fsyncdir(ctx context.Context, flags uint32) syscall.Errno {
	d.n.r.record(ctx, Op{Kind: SyncDir, Path: d.n.rel()})
	return 0
}
