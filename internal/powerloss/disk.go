package powerloss

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"sort"
	"sync"

	"github.com/polyloop/polyloop-conform/reference/journal"
)

// ErrPowerCut is what every operation returns once the power is cut.
var ErrPowerCut = errors.New("power cut")

// SectorSize is the unit a write can be torn at: a sector is written
// whole or not at all, and a longer write can stop at any sector boundary.
const SectorSize = 512

// Disk is an in-memory file system with power-loss semantics. For each
// file it keeps what the process sees and what is durable: a write
// changes the first, Sync copies it to the second, and a new file's
// directory entry is durable only once its directory is synced. With Cut
// set, the power goes off after that many operations that change the
// disk: every later operation fails with ErrPowerCut.
type Disk struct {
	// Cut is the number of operations allowed before the power goes off;
	// 0 means it never does.
	Cut int
	// LyingSync makes Sync and SyncDir return success without making
	// anything durable: a disk that acknowledges its write cache, or a
	// journal that never really syncs. The tests use it to show the
	// exploration catches what fsync protects against.
	LyingSync bool
	// TearInside adds, to the states of a file with unsynced bytes, one
	// that keeps half of them: a write torn inside a sector, which a file
	// system that extends a file before its data lands can leave. Traced
	// journals use it, so that a record shorter than a sector can tear.
	TearInside bool
	// OneTear keeps, of the tears of a file's unsynced bytes, only the one
	// at the sector boundary nearest their middle: a recorded journal of
	// several page-sized files (a database) has too many to resume each.
	OneTear bool

	mu    sync.Mutex
	ops   int
	cut   bool
	files map[string]*file
}

type file struct {
	data         []byte // what the process sees
	durable      []byte // what a power cut keeps
	entryDurable bool   // the directory entry survives a power cut
	// replaced is the file a rename put this one over, while the rename
	// is not durable: a power cut keeps that name on either file.
	replaced *file
	// unlinked: the process removed the name; until its directory is
	// synced a power cut may keep it, with the file's durable contents.
	unlinked bool
}

// Ops is the number of disk-changing operations performed so far.
func (d *Disk) Ops() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.ops
}

// PowerCut reports whether the power went off.
func (d *Disk) PowerCut() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.cut
}

// op counts one disk-changing operation, or refuses it after the cut.
// The caller holds d.mu.
func (d *Disk) op() error {
	if d.cut || (d.Cut > 0 && d.ops >= d.Cut) {
		d.cut = true
		return ErrPowerCut
	}
	d.ops++
	return nil
}

func (d *Disk) init() {
	if d.files == nil {
		d.files = map[string]*file{}
	}
}

// MkdirAll implements journal.FS. Directories are not modelled: they are
// taken as existing and durable (the run directory is made before the
// run); what a power cut can lose is a file's entry in one, until
// SyncDir.
func (d *Disk) MkdirAll(string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cut {
		return ErrPowerCut
	}
	return nil
}

// Create implements journal.FS.
func (d *Disk) Create(path string) (journal.File, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.init()
	if err := d.op(); err != nil {
		return nil, err
	}
	old, ok := d.files[path]
	if ok && !old.unlinked {
		return nil, &fs.PathError{Op: "create", Path: path, Err: fs.ErrExist}
	}
	f := &file{}
	if ok && old.entryDurable {
		// A new file over a name whose removal is not durable yet: the
		// cut keeps either, like a rename over it.
		f.replaced = old
	}
	d.files[path] = f
	return &handle{d: d, path: path, append: true}, nil
}

// OpenWrite implements journal.FS.
func (d *Disk) OpenWrite(path string) (journal.File, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.init()
	if d.cut {
		return nil, ErrPowerCut
	}
	if _, ok := d.files[path]; !ok {
		return nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrNotExist}
	}
	return &handle{d: d, path: path}, nil
}

// ReadFile implements journal.FS.
func (d *Disk) ReadFile(path string) ([]byte, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.init()
	f, ok := d.files[path]
	if !ok {
		return nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrNotExist}
	}
	return slices.Clone(f.data), nil
}

// SyncDir implements journal.FS: the entries of files in dir become
// durable.
func (d *Disk) SyncDir(dir string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.init()
	if err := d.op(); err != nil {
		return err
	}
	if d.LyingSync {
		return nil
	}
	for p, f := range d.files {
		if filepath.Dir(p) == filepath.Clean(dir) {
			f.entryDurable, f.replaced = true, nil
			if f.unlinked {
				delete(d.files, p)
			}
		}
	}
	return nil
}

// Unlink removes the name path. Like a new name, the removal is durable
// only once its directory is synced: until then a power cut may keep the
// file, with what of it was durable.
func (d *Disk) Unlink(path string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.init()
	if err := d.op(); err != nil {
		return err
	}
	f := d.files[path]
	switch {
	case f == nil:
	case f.entryDurable || f.replaced != nil:
		f.unlinked, f.data = true, nil
	default:
		delete(d.files, path) // its name never reached the disk
	}
	return nil
}

// Rename moves the file at from to to, over any file there. Like every
// new directory entry, the rename is durable only once its directory is
// synced: until then a power cut leaves at to either the file renamed
// (rename is atomic) or what was durably there before, or nothing.
// The old name is taken as gone (a leftover temporary file is not the
// journal).
func (d *Disk) Rename(from, to string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.init()
	if err := d.op(); err != nil {
		return err
	}
	f := d.files[from]
	if f == nil {
		return nil // not a file the trace followed
	}
	delete(d.files, from)
	moved := &file{data: f.data, durable: f.durable}
	if old := d.files[to]; old != nil {
		moved.replaced = old
		if old.replaced != nil && !old.entryDurable {
			moved.replaced = old.replaced
		}
	}
	d.files[to] = moved
	return nil
}

type handle struct {
	d      *Disk
	path   string
	off    int64
	append bool
	// durable: opened with O_SYNC or O_DSYNC, every write durable when
	// it returns (traced journals; replay syncs after each write).
	durable bool
}

func (h *handle) Write(p []byte) (int, error) {
	h.d.mu.Lock()
	defer h.d.mu.Unlock()
	if err := h.d.op(); err != nil {
		return 0, err
	}
	f := h.d.files[h.path]
	if h.append {
		h.off = int64(len(f.data))
	}
	end := h.off + int64(len(p))
	if end > int64(len(f.data)) {
		f.data = append(f.data, make([]byte, end-int64(len(f.data)))...)
	}
	copy(f.data[h.off:], p)
	h.off = end
	return len(p), nil
}

func (h *handle) Sync() error {
	h.d.mu.Lock()
	defer h.d.mu.Unlock()
	if err := h.d.op(); err != nil {
		return err
	}
	if !h.d.LyingSync {
		f := h.d.files[h.path]
		f.durable = slices.Clone(f.data)
	}
	return nil
}

func (h *handle) Truncate(size int64) error {
	h.d.mu.Lock()
	defer h.d.mu.Unlock()
	if err := h.d.op(); err != nil {
		return err
	}
	f := h.d.files[h.path]
	if size < int64(len(f.data)) {
		f.data = f.data[:size:size]
	} else {
		f.data = append(f.data, make([]byte, size-int64(len(f.data)))...)
	}
	return nil
}

func (h *handle) Seek(offset int64, whence int) (int64, error) {
	if whence != io.SeekStart {
		return 0, fmt.Errorf("powerloss: seek whence %d is not modelled", whence)
	}
	h.off = offset
	return offset, nil
}

func (h *handle) Close() error { return nil }

// State is one thing the disk may hold after a power cut: per file, its
// contents, or absent.
type State struct {
	Files map[string][]byte
	// Note says how the state differs from what the process saw, for
	// failure messages ("journal.jsonl: 512 of 731 unsynced bytes kept").
	Note string
}

// States lists every state a power cut now could leave, by the rules in
// the package comment. Files are independent; their states combine.
func (d *Disk) States() []State {
	d.mu.Lock()
	defer d.mu.Unlock()
	paths := make([]string, 0, len(d.files))
	for p := range d.files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	states := []State{{Files: map[string][]byte{}}}
	for _, p := range paths {
		options := fileStates(filepath.Base(p), d.files[p], d.TearInside, false)
		var next []State
		for _, s := range states {
			for _, o := range options {
				files := maps(s.Files)
				if o.present {
					files[p] = o.data
				}
				note := s.Note
				if o.note != "" {
					if note != "" {
						note += "; "
					}
					note += o.note
				}
				next = append(next, State{Files: files, Note: note})
			}
		}
		states = next
	}
	return states
}

type fileState struct {
	present bool
	data    []byte
	note    string
}

func fileStates(name string, f *file, inside, one bool) []fileState {
	var out []fileState
	if f.unlinked {
		out = append(out, fileState{note: name + ": removed"})
		if f.entryDurable {
			out = append(out, fileState{present: true, data: slices.Clone(f.durable), note: name + ": removal lost (directory not synced)"})
		} else if old := f.replaced; old != nil && old.entryDurable {
			out = append(out, fileState{present: true, data: slices.Clone(old.durable), note: name + ": removal lost (directory not synced), the file it replaced kept"})
		}
		return out
	}
	if !f.entryDurable {
		if old := f.replaced; old != nil && old.entryDurable {
			out = append(out, fileState{present: true, data: slices.Clone(old.durable), note: name + ": rename lost (directory not synced), the file it replaced kept"})
		} else {
			out = append(out, fileState{note: name + ": directory entry lost (directory not synced)"})
		}
	}
	if !bytesHasPrefix(f.data, f.durable) {
		// Truncated since the last sync: either side may be what stays.
		return append(out,
			fileState{present: true, data: slices.Clone(f.durable), note: name + ": truncation lost"},
			fileState{present: true, data: slices.Clone(f.data)})
	}
	pending := len(f.data) - len(f.durable)
	if pending == 0 {
		return append(out, fileState{present: true, data: slices.Clone(f.data)})
	}
	out = append(out, fileState{present: true, data: slices.Clone(f.durable), note: fmt.Sprintf("%s: %d unsynced bytes lost", name, pending)})
	half := len(f.durable) + pending/2
	mid := half - half%SectorSize
	for cut := len(f.durable) + 1; cut < len(f.data); cut++ {
		if one && cut != mid && cut != half {
			continue
		}
		if cut%SectorSize == 0 || (inside && cut == half) {
			out = append(out, fileState{present: true, data: slices.Clone(f.data[:cut]), note: fmt.Sprintf("%s: torn at byte %d, %d of %d unsynced bytes kept", name, cut, cut-len(f.durable), pending)})
		}
	}
	return append(out, fileState{present: true, data: slices.Clone(f.data), note: fmt.Sprintf("%s: %d unsynced bytes kept", name, pending)})
}

func bytesHasPrefix(b, prefix []byte) bool {
	return len(b) >= len(prefix) && string(b[:len(prefix)]) == string(prefix)
}

func maps(m map[string][]byte) map[string][]byte {
	out := make(map[string][]byte, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// Restore returns a disk holding exactly the state, every file durable:
// the disk the next process finds after the power comes back.
func Restore(s State) *Disk {
	d := &Disk{}
	d.init()
	for p, data := range s.Files {
		d.files[p] = &file{data: slices.Clone(data), durable: slices.Clone(data), entryDurable: true}
	}
	return d
}
