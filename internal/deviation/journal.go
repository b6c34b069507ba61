package deviation

import (
	"bytes"
	"errors"

	"github.com/polyloop/polyloop-conform/reference/journal"
	"github.com/polyloop/polyloop-conform/reference/run"
)

// The wrappers around the journal's file system and hook (0002).

// journalFS wraps the file system one kernel call journals through, the
// real one when it has none.
func journalFS(f func(journal.FS) journal.FS) func(*run.Options) {
	return func(o *run.Options) {
		fsys := o.JournalFS
		if fsys == nil {
			fsys = journal.OS
		}
		o.JournalFS = f(fsys)
	}
}

// rewriting is a file system whose journal files see every record line
// rewritten before it is written: nil drops the line.
type rewriting struct {
	journal.FS
	rewrite func(r *journal.Record) bool // false drops the record
}

func (r rewriting) Create(path string) (journal.File, error) {
	f, err := r.FS.Create(path)
	return rewritten{f, r.rewrite}, err
}

func (r rewriting) OpenWrite(path string) (journal.File, error) {
	f, err := r.FS.OpenWrite(path)
	return rewritten{f, r.rewrite}, err
}

type rewritten struct {
	journal.File
	rewrite func(r *journal.Record) bool
}

// Write rewrites one record line (the journal writes a record in one call)
// and reports the whole line written.
func (w rewritten) Write(line []byte) (int, error) {
	rec, err := journal.Decode(bytes.TrimSuffix(line, []byte("\n")))
	if err != nil {
		return w.File.Write(line)
	}
	if !w.rewrite(&rec) {
		return len(line), nil
	}
	out, err := journal.Encode(rec)
	if err != nil {
		return 0, err
	}
	if _, err := w.File.Write(out); err != nil {
		return 0, err
	}
	return len(line), nil
}

func rewrite(f func(r *journal.Record) bool) func(*run.Options) {
	return journalFS(func(fsys journal.FS) journal.FS { return rewriting{fsys, f} })
}

// noRunEnd never writes the run's end (0002.D2): the record is dropped,
// no hook sees it written and no write fault can fail it.
func noRunEnd(o *run.Options) {
	rewrite(func(r *journal.Record) bool { return r.Type != journal.TypeRunEnd })(o)
	o.JournalHook = skipRunEnd(o.JournalHook)
	o.JournalWriteFault = skipRunEnd(o.JournalWriteFault)
}

// skipRunEnd is f at every point but the run's end; nil stays nil.
func skipRunEnd(f func(journal.Point) error) func(journal.Point) error {
	if f == nil {
		return nil
	}
	return func(p journal.Point) error {
		if p.Record == journal.TypeRunEnd {
			return nil
		}
		return f(p)
	}
}

// endIgnored writes the run's end as a record resume does not know, so
// resume runs on past it (0002.D3).
func endIgnored(r *journal.Record) bool {
	if r.Type == journal.TypeRunEnd {
		r.Type = "run_end_ignored"
	}
	return true
}

// replayed rewrites the replay policy journalled with an intent (0002.D4).
func replayed(from, to string, codeOnly bool) func(r *journal.Record) bool {
	return func(r *journal.Record) bool {
		if r.Type == journal.TypeActionIntent && r.Replay == from && (!codeOnly || r.Tool == "") {
			r.Replay = to
		}
		return true
	}
}

// reading is a file system whose journal reads are rewritten.
type reading struct {
	journal.FS
	read func(data []byte) ([]byte, error)
}

func (r reading) ReadFile(path string) ([]byte, error) {
	data, err := r.FS.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return r.read(data)
}

func read(f func(data []byte) ([]byte, error)) func(*run.Options) {
	return journalFS(func(fsys journal.FS) journal.FS { return reading{fsys, f} })
}

// tornRefused refuses a journal whose last record is torn (0002.D5).
func tornRefused(data []byte) ([]byte, error) {
	if len(data) > 0 && data[len(data)-1] != '\n' {
		return nil, errors.New("the journal is damaged: its final record is torn")
	}
	return data, nil
}

// damagedCut reads a damaged complete last record as a torn one, so it is
// cut and resume goes on (0002.D5).
func damagedCut(data []byte) ([]byte, error) {
	var te *journal.TailError
	if _, err := journal.Parse("", data); errors.As(err, &te) && !te.Torn && !errors.Is(err, journal.ErrMidFileCorruption) {
		return bytes.TrimSuffix(data, []byte("\n")), nil
	}
	return data, nil
}

// journalErrorIgnored lets every failed journal append pass as done, a
// write the file system refused and a crash its hook injected alike: a
// record refused before it was written is missing, and the run goes on
// (0002.D6).
func journalErrorIgnored(o *run.Options) {
	drop := false
	if fault := o.JournalWriteFault; fault != nil {
		o.JournalWriteFault = func(p journal.Point) error {
			drop = drop || fault(p) != nil
			return nil
		}
	}
	if hook := o.JournalHook; hook != nil {
		o.JournalHook = func(p journal.Point) error {
			drop = drop || hook(p) != nil && p.When == journal.Before
			return nil
		}
	}
	rewrite(func(*journal.Record) bool {
		keep := !drop
		drop = false
		return keep
	})(o)
}
