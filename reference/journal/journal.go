package journal

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"path/filepath"
	"strconv"
)

// Record types, in the order a step writes them.
const (
	TypeRunStarted   = "run_started"
	TypeModelOutput  = "model_output"
	TypeActionIntent = "action_intent"
	TypeActionResult = "action_result"
	TypeRunEnd       = "run_end"
)

// Record is one journal entry. Payload carries the run package's own step
// and end records, so the journal does not depend on their shape.
type Record struct {
	Type      string          `json:"type"`
	Step      int             `json:"step,omitempty"`
	Output    string          `json:"output,omitempty"`
	Tool      string          `json:"tool,omitempty"`
	Replay    string          `json:"replay,omitempty"`
	Arguments map[string]any  `json:"arguments,omitempty"`
	Payload   json.RawMessage `json:"payload,omitempty"`
}

// FileName is the journal's name inside a run directory.
const FileName = "journal.jsonl"

// MaxRecordBytes bounds one record; a longer line is corruption.
const MaxRecordBytes = 16 << 20

// Point names a moment around a write: the crash point of scenarios and
// trajectories, the journal_point of the protocol (internal/protocol's
// Point is this type) and the hook's argument here. One type, so that a
// point the kernel reports is the point the runner kills at.
type Point struct {
	When   string `json:"when"`   // "before" or "after" the write
	Seq    int    `json:"seq"`    // 1-based position of the record in the file
	Record string `json:"record"` // the record's type
	Step   int    `json:"step,omitempty"`
	// Phase is the index of the phase whose journal the point writes (0
	// for a single request). The protocol carries it in the message, not
	// in the point object.
	Phase int `json:"-"`
}

// The two sides of a write.
const (
	Before = "before"
	After  = "after"
)

// String renders the point as trajectories record crash points.
func (p Point) String() string {
	return fmt.Sprintf("%s:%d:%s:step%d", p.When, p.Seq, p.Record, p.Step)
}

// Hook is called before and after every write; a non-nil error aborts the
// write (before) or the step (after) and is returned to the caller
// unchanged. Crash injection uses it.
type Hook func(Point) error

// Options are a writer's test seams.
type Options struct {
	// Hook is called before and after every write (crash injection).
	Hook Hook
	// WriteFault, when it returns an error for a point, makes that write
	// fail as if the file system had answered with the error (ENOSPC,
	// EACCES …), so tests reach the real error path without filling a disk.
	WriteFault func(Point) error
	// FS is the file system to write through; nil is the real one.
	FS FS
}

func (o Options) fs() FS {
	if o.FS == nil {
		return OS
	}
	return o.FS
}

// Writer appends records to one run's journal.
type Writer struct {
	f     File
	path  string
	seq   int
	hook  Hook
	fault func(Point) error
}

// WriteError is a failed append: the record may be missing or torn, and
// the run must stop rather than go on with a shorter journal (0002.D6).
type WriteError struct {
	Path   string
	Seq    int
	Type   string
	During string // write or fsync
	Err    error
}

func (e *WriteError) Error() string {
	return fmt.Sprintf("journal %s: %s of record %d (%s) failed: %v; the run stopped so that the journal is not silently shorter", e.Path, e.During, e.Seq, e.Type, e.Err)
}

func (e *WriteError) Unwrap() error { return e.Err }

// Create starts a new journal in dir, which must not hold one yet.
func Create(dir string, o Options) (*Writer, error) {
	fsys := o.fs()
	if err := fsys.MkdirAll(dir); err != nil {
		return nil, fmt.Errorf("journal: create run directory: %w", err)
	}
	path := filepath.Join(dir, FileName)
	f, err := fsys.Create(path)
	if err != nil {
		return nil, fmt.Errorf("journal: create %s: %w", path, err)
	}
	// The new file's directory entry must be durable before any record
	// is: otherwise a power cut can lose the whole journal after an
	// action's intent was "written".
	if err := fsys.SyncDir(dir); err != nil {
		f.Close()
		return nil, fmt.Errorf("journal: sync directory %s: %w", dir, err)
	}
	return &Writer{f: f, path: path, hook: o.Hook, fault: o.WriteFault}, nil
}

// Reopen continues an existing journal after Read. validBytes is where the
// last intact record ends; anything after it (a torn tail) is cut off first,
// so new records never follow garbage.
func Reopen(dir string, validBytes int64, records int, o Options) (*Writer, error) {
	path := filepath.Join(dir, FileName)
	f, err := o.fs().OpenWrite(path)
	if err != nil {
		return nil, fmt.Errorf("journal: reopen %s: %w", path, err)
	}
	if err := f.Truncate(validBytes); err != nil {
		f.Close()
		return nil, fmt.Errorf("journal: cut torn tail of %s at byte %d: %w", path, validBytes, err)
	}
	if _, err := f.Seek(validBytes, io.SeekStart); err != nil {
		f.Close()
		return nil, fmt.Errorf("journal: seek %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return nil, fmt.Errorf("journal: sync %s: %w", path, err)
	}
	return &Writer{f: f, path: path, seq: records, hook: o.Hook, fault: o.WriteFault}, nil
}

// Path returns the journal file's path.
func (w *Writer) Path() string { return w.path }

// Append writes one record with a single write call and fsyncs it before
// returning, so a record is either whole on disk or detectably torn.
func (w *Writer) Append(r Record) error {
	p := Point{When: Before, Seq: w.seq + 1, Record: r.Type, Step: r.Step}
	if w.hook != nil {
		if err := w.hook(p); err != nil {
			return err
		}
	}
	line, err := Encode(r)
	if err != nil {
		return fmt.Errorf("journal %s: encode %s record: %w", w.path, r.Type, err)
	}
	var n int
	if w.fault != nil {
		err = w.fault(p)
	}
	if err == nil {
		n, err = w.f.Write(line)
		if err == nil && n != len(line) {
			err = io.ErrShortWrite
		}
	}
	if err != nil {
		return &WriteError{Path: w.path, Seq: p.Seq, Type: r.Type, During: "write", Err: err}
	}
	if err := w.f.Sync(); err != nil {
		return &WriteError{Path: w.path, Seq: p.Seq, Type: r.Type, During: "fsync", Err: err}
	}
	w.seq++
	if w.hook != nil {
		p.When = After
		if err := w.hook(p); err != nil {
			return err
		}
	}
	return nil
}

// Close closes the file.
func (w *Writer) Close() error { return w.f.Close() }

// Encode renders a record as "crc32c-hex SP json LF".
func Encode(r Record) ([]byte, error) {
	body, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	sum := crc32.Checksum(body, castagnoli)
	out := make([]byte, 0, len(body)+10)
	out = append(out, fmt.Sprintf("%08x ", sum)...)
	out = append(out, body...)
	return append(out, '\n'), nil
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// TailError reports a journal whose end is not a whole, intact record. The
// records before Offset are valid and returned alongside it.
type TailError struct {
	Path   string
	Line   int
	Offset int64
	Reason string
	Torn   bool // true when the last line lacks its newline: a write cut short by a crash
}

func (e *TailError) Error() string {
	kind := "corrupt record"
	if e.Torn {
		kind = "torn final record"
	}
	return fmt.Sprintf("%s:%d: %s at byte %d: %s", e.Path, e.Line, kind, e.Offset, e.Reason)
}

// ErrDamaged marks a journal that resume must refuse (0002.D5): a
// complete record that fails its checksum or does not decode, or damage
// followed by intact records. Neither is what a crash leaves, so cutting
// it could drop a record that was written and re-run a NEVER action.
var ErrDamaged = errors.New("the journal is damaged, not torn by a crash; resume refuses it")

// ErrMidFileCorruption wraps a TailError found before the last line: intact
// records follow damaged ones, which no crash produces, so resume refuses.
var ErrMidFileCorruption = errors.New("journal is damaged before its last record; it was not torn by a crash, so it cannot be resumed safely")

// Contents is what Read found.
type Contents struct {
	Records    []Record
	ValidBytes int64
}

// ReadFile reads the journal in dir.
func ReadFile(dir string) (Contents, error) { return ReadFileFS(OS, dir) }

// ReadFileFS reads the journal in dir through fsys.
func ReadFileFS(fsys FS, dir string) (Contents, error) {
	path := filepath.Join(dir, FileName)
	data, err := fsys.ReadFile(path)
	if err != nil {
		return Contents{}, fmt.Errorf("journal: read %s: %w", path, err)
	}
	return Parse(path, data)
}

// Parse decodes journal bytes. A torn or damaged last line yields the
// records before it and a *TailError; damage followed by intact lines
// yields ErrMidFileCorruption.
func Parse(path string, data []byte) (Contents, error) {
	var c Contents
	var off int64
	line := 0
	for len(data) > 0 {
		line++
		nl := bytes.IndexByte(data, '\n')
		if nl < 0 {
			return c, &TailError{Path: path, Line: line, Offset: off, Torn: true, Reason: fmt.Sprintf("%d bytes without a closing newline", len(data))}
		}
		raw := data[:nl]
		rec, reason := decodeLine(raw)
		if reason != "" {
			te := &TailError{Path: path, Line: line, Offset: off, Reason: reason}
			if len(data) > nl+1 {
				return c, fmt.Errorf("%w: %w", ErrMidFileCorruption, te)
			}
			return c, te
		}
		c.Records = append(c.Records, rec)
		off += int64(nl + 1)
		c.ValidBytes = off
		data = data[nl+1:]
	}
	return c, nil
}

// Decode reads one record line written by Encode, without its newline.
func Decode(line []byte) (Record, error) {
	r, reason := decodeLine(line)
	if reason != "" {
		return Record{}, errors.New(reason)
	}
	return r, nil
}

func decodeLine(raw []byte) (Record, string) {
	if len(raw) > MaxRecordBytes {
		return Record{}, fmt.Sprintf("record is %d bytes, over the %d-byte limit", len(raw), MaxRecordBytes)
	}
	if len(raw) < 10 || raw[8] != ' ' {
		return Record{}, "line does not start with an 8-digit checksum and a space"
	}
	want, err := strconv.ParseUint(string(raw[:8]), 16, 32)
	if err != nil {
		return Record{}, "checksum is not hexadecimal"
	}
	body := raw[9:]
	if got := crc32.Checksum(body, castagnoli); uint64(got) != want {
		return Record{}, fmt.Sprintf("checksum mismatch (stored %08x, computed %08x)", want, got)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var r Record
	if err := dec.Decode(&r); err != nil {
		return Record{}, "record is not valid JSON: " + err.Error()
	}
	if r.Type == "" {
		return Record{}, "record has no type"
	}
	return r, ""
}
