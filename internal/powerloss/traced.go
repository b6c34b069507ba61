package powerloss

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/polyloop/polyloop-conform/fakes"
	"github.com/polyloop/polyloop-conform/internal/crashpoint"
	"github.com/polyloop/polyloop-conform/internal/protocol"
	"github.com/polyloop/polyloop-conform/internal/systrace"
	"github.com/polyloop/polyloop-conform/scenarios"
	"github.com/polyloop/polyloop-conform/trajectories"
)

// TracedOptions configure the power-loss exploration of an implementation
// over the protocol.
type TracedOptions struct {
	Timeout  time.Duration
	Parallel int
	// Traced starts a runner whose processes run under strace, writing
	// their system calls to trace; stop ends them (strace with them).
	Traced func(trace string) (r crashpoint.Runner, stop func(), err error)
}

// TracedResult is what one scenario's power-loss exploration found.
type TracedResult struct {
	Scenario string
	States   int // distinct disk states resumed from
	Failures []string
	Baseline error
	// Skipped, when set, is why no state was judged: the journal was
	// reached by a call the model cannot follow (one sentence).
	Skipped string
}

// ExploreTraced explores the power cuts of sc on any implementation: one
// uninterrupted run under strace records every write and sync the
// implementation makes to its journal, and where its journal points fall
// among them; each is replayed on the modelled disk (replay, the one
// conversion from system calls to disk operations), and after each one
// every state a power cut then leaves is built: all synced data, any
// prefix of what was not synced (a torn last write included), a new file
// whose directory was not synced gone. Each distinct state is handed to a
// process that resumes it, after a kill at the journal point the state
// amounts to, and judged like that kill point by crashpoint.Judge.
func ExploreTraced(ctx context.Context, r crashpoint.Runner, sc *scenarios.Scenario, o TracedOptions) TracedResult {
	res := TracedResult{Scenario: sc.ID}
	plain := crashpoint.WithoutCrash(sc)
	root, err := os.MkdirTemp("", "polyloop-conform-powerloss-*")
	if err != nil {
		res.Baseline = err
		return res
	}
	defer os.RemoveAll(root)
	base, ops, err := tracedBaseline(ctx, plain, root, o)
	if err != nil {
		res.Baseline = err
		return res
	}
	cuts, err := replay(ops, filepath.Join(root, "run"), base.Points)
	var skip *unmodelled
	if errors.As(err, &skip) {
		res.Skipped = skip.Error()
		return res
	}
	if err != nil {
		res.Baseline = err
		return res
	}
	res.States = len(cuts)
	var mu sync.Mutex
	g := new(errgroup.Group)
	g.SetLimit(max(1, o.Parallel))
	for _, c := range cuts {
		g.Go(func() error {
			if ctx.Err() != nil {
				return nil
			}
			found := judgeCut(ctx, r, plain, base, c, o.Timeout)
			mu.Lock()
			res.Failures = append(res.Failures, found...)
			mu.Unlock()
			return nil
		})
	}
	_ = g.Wait()
	slices.Sort(res.Failures)
	return res
}

// tracedBaseline runs sc uninterrupted under strace, its journal in
// root/run, and returns the baseline and the system calls.
func tracedBaseline(ctx context.Context, sc *scenarios.Scenario, root string, o TracedOptions) (*crashpoint.Baseline, []systrace.Op, error) {
	trace := filepath.Join(root, "trace")
	tr, stop, err := o.Traced(trace)
	if err != nil {
		return nil, nil, err
	}
	env := fakes.New(sc, nil)
	var points []protocol.Point
	var mu sync.Mutex
	bctx, cancel := context.WithTimeout(ctx, o.Timeout)
	got, err := tr.RunWith(bctx, sc, env, protocol.RunOptions{Points: true, JournalDir: filepath.Join(root, "run"), OnPoint: func(p protocol.Point) {
		mu.Lock()
		points = append(points, p)
		mu.Unlock()
	}})
	cancel()
	stop()
	if err != nil {
		return nil, nil, err
	}
	snap := env.Snapshot()
	got.HandlerCalls, got.ModelCalls = snap.HandlerCalls, snap.ModelCalls
	base, err := crashpoint.NewBaseline(got, points, snap.HandlerCalls)
	if err != nil {
		return nil, nil, err
	}
	f, err := os.Open(trace)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	ops, err := systrace.Parse(f)
	return base, ops, err
}

// cut is one state a power cut leaves, with the kill point it amounts to.
type cut struct {
	at    protocol.Point
	where string            // the moment, for people
	files map[string][]byte // relative to the journal_dir
	lost  []string          // records reported written (after point) that the state lacks
}

// unmodelled is a call on the journal that the disk model cannot follow:
// the scenario is skipped with its sentence, never failed.
type unmodelled struct{ op systrace.Op }

func (u *unmodelled) Error() string {
	return fmt.Sprintf("power-loss: %s on the journal is not modelled, %s (%s); the scenario's journal is explored by kills (explore without --power-loss)", u.op.Name, u.op.Why, filepath.Base(u.op.Path))
}

// record is one journal write as the trace shows it: the file it went to
// (as named when its after point was reported) and the file's length
// before and after it.
type record struct {
	p          protocol.Point
	path       string
	start, end int
}

// replay applies the traced calls under dir to a modelled disk, in order,
// and after each one lists the states a power cut leaves then, each once.
func replay(ops []systrace.Op, dir string, points []protocol.Point) ([]cut, error) {
	recs, err := records(ops, dir)
	if err != nil {
		return nil, err
	}
	for _, op := range ops {
		if op.Kind == systrace.Unmodelled && (op.Path == "" || under(op.Path, dir)) {
			return nil, &unmodelled{op}
		}
	}
	d := &Disk{TearInside: true}
	h := map[string]*handle{}
	var current *record // the record being written, between its points
	var last *protocol.Point
	started := map[int]bool{} // phases whose first record began
	seen := map[string]bool{}
	var cuts []cut
	ri := 0
	for _, op := range ops {
		if op.Kind == systrace.Stdout {
			for _, p := range markers(op.Data) {
				if p.When == "before" && ri < len(recs) {
					current = &recs[ri]
					started[p.Phase] = true
				} else if p.When == "after" {
					current, last = nil, &p
					ri++ // the records before ri were reported written
					// The power can go off the moment the record is
					// reported written, before any other call.
					cuts = appendCuts(cuts, seen, d, dir, "the after point of record "+strconv.Itoa(p.Seq), current, last, recs[:ri])
				}
			}
			continue
		}
		if !under(op.Path, dir) && op.Kind != systrace.SyncAll {
			continue
		}
		steps := []systrace.Op{op}
		if op.Kind == systrace.Write && (op.Durable || (h[op.Path] != nil && h[op.Path].durable)) {
			// O_SYNC, O_DSYNC, RWF_SYNC or RWF_DSYNC: durable when the
			// call returns; a cut during it may tear it like any write.
			steps = append(steps, systrace.Op{Kind: systrace.Sync, Path: op.Path})
		}
		for _, step := range steps {
			if err := apply(d, h, step); err != nil {
				return nil, err
			}
			if (last == nil && current == nil) || !started[phaseDir(op.Path, dir)] {
				// Before the first record (of the run, or of the phase
				// whose journal this is): nothing of it to resume. Like
				// a kill before that phase, which begins it anew.
				continue
			}
			cuts = appendCuts(cuts, seen, d, dir, op.Kind+" of "+filepath.Base(op.Path), current, last, recs[:ri])
		}
	}
	return cuts, nil
}

// appendCuts adds the states a power cut after moment leaves, each once.
func appendCuts(cuts []cut, seen map[string]bool, d *Disk, dir string, moment string, current *record, last *protocol.Point, done []record) []cut {
	for _, s := range d.States() {
		c := classify(s, dir, current, last, done)
		key := c.at.String() + " " + strconv.Itoa(c.at.Phase) + " " + digest(c.files)
		if seen[key] {
			continue
		}
		seen[key] = true
		c.where = "power cut after " + moment
		if s.Note != "" {
			c.where += " (" + s.Note + ")"
		}
		cuts = append(cuts, c)
	}
	return cuts
}

// apply is the one conversion of a traced system call to an operation of
// the modelled disk.
func apply(d *Disk, h map[string]*handle, op systrace.Op) error {
	d.mu.Lock()
	d.init()
	_, exists := d.files[op.Path]
	d.mu.Unlock()
	switch op.Kind {
	case systrace.Open:
		if !exists {
			if _, err := d.Create(op.Path); err != nil {
				return err
			}
		}
		h[op.Path] = &handle{d: d, path: op.Path, append: op.Append, durable: op.Durable}
		if op.Trunc {
			return h[op.Path].Truncate(0)
		}
	case systrace.Write:
		f := h[op.Path]
		if f == nil {
			return fmt.Errorf("power-loss exploration: %s written without an open the trace shows", op.Path)
		}
		if op.Offset >= 0 {
			f.Seek(op.Offset, 0)
		}
		_, err := f.Write(op.Data)
		return err
	case systrace.Sync:
		if exists {
			return (&handle{d: d, path: op.Path}).Sync()
		}
		return d.SyncDir(op.Path)
	case systrace.SyncAll:
		for p := range h {
			(&handle{d: d, path: p}).Sync()
			d.SyncDir(filepath.Dir(p))
		}
	case systrace.NotDurable:
		// sync_file_range: by rule, nothing becomes durable (it waits
		// for no metadata and flushes no device cache).
	case systrace.Truncate:
		return (&handle{d: d, path: op.Path}).Truncate(op.Size)
	case systrace.Rename:
		if hd := h[op.Path]; hd != nil {
			// An open descriptor follows its file to the new name.
			delete(h, op.Path)
			hd.path, h[op.To] = op.To, hd
		}
		return d.Rename(op.Path, op.To)
	case systrace.Unlink:
		return d.Unlink(op.Path)
	}
	return nil
}

// records pairs each record's journal points with the file it went to and
// that file's length before and after it.
func records(ops []systrace.Op, dir string) ([]record, error) {
	size := map[string]int{}
	var recs []record
	var cur *record
	for _, op := range ops {
		switch {
		case op.Kind == systrace.Stdout:
			for _, p := range markers(op.Data) {
				if p.When == "before" {
					cur = &record{p: p}
				} else if cur != nil {
					if cur.path != "" {
						cur.end = size[cur.path]
					}
					recs = append(recs, *cur)
					cur = nil
				}
			}
		case !under(op.Path, dir):
		case op.Kind == systrace.Write:
			if cur != nil && cur.path == "" {
				cur.path, cur.start = op.Path, size[op.Path]
			}
			end := size[op.Path] + len(op.Data)
			if op.Offset >= 0 {
				end = max(size[op.Path], int(op.Offset)+len(op.Data))
			}
			size[op.Path] = end
		case op.Kind == systrace.Rename:
			// A record lives where its file is renamed to.
			size[op.To] = size[op.Path]
			delete(size, op.Path)
			for i := range recs {
				if recs[i].path == op.Path {
					recs[i].path = op.To
				}
			}
			if cur != nil && cur.path == op.Path {
				cur.path = op.To
			}
		case op.Kind == systrace.Truncate:
			size[op.Path] = int(op.Size)
		case op.Kind == systrace.Open && op.Trunc:
			size[op.Path] = 0
		}
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("the trace shows no journal point on stdout; power-loss exploration needs the journal points of docs/protocol.md, written by the traced process")
	}
	return recs, nil
}

// classify names the kill point a state amounts to and the records it
// lost: during a record's write, the point before it unless the state
// keeps it whole; between records, the point after the last one.
func classify(s State, dir string, current *record, last *protocol.Point, done []record) cut {
	c := cut{files: map[string][]byte{}}
	for p, data := range s.Files {
		rel, _ := filepath.Rel(dir, p)
		c.files[rel] = data
	}
	kept := func(r record) bool {
		return r.path == "" || len(s.Files[r.path]) >= r.end
	}
	switch {
	case current != nil && kept(*current) && current.end > current.start:
		c.at = current.p
		c.at.When = "after"
	case current != nil:
		c.at = current.p
	default:
		c.at = *last
	}
	for _, r := range done {
		if !kept(r) {
			c.lost = append(c.lost, fmt.Sprintf("%srecord %d (%s)", phaseOf(r.p), r.p.Seq, trajectories.CrashPointName("", r.p.Record, r.p.Step)[1:]))
		}
	}
	return c
}

// judgeCut kills a process at the cut's point, hands the resuming process
// the cut's disk state and judges the resume like a kill there.
func judgeCut(ctx context.Context, r crashpoint.Runner, sc *scenarios.Scenario, base *crashpoint.Baseline, c cut, timeout time.Duration) []string {
	env := fakes.New(sc, nil)
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	crash := &scenarios.CrashSpec{When: c.at.When, Record: c.at.Record, Step: c.at.Step}
	name := trajectories.CrashPointName(c.at.When, c.at.Record, c.at.Step)
	if sc.Request == nil {
		crash.Phase = sc.Phases[c.at.Phase].Name
		name = crash.Phase + ":" + name
	}
	prefix := c.where + ", like a kill at " + name
	if n := len(c.lost); n > 0 {
		lost := c.lost[0]
		if n > 1 {
			lost = fmt.Sprintf("%d records, %s to %s,", n, c.lost[0], c.lost[n-1])
		}
		prefix += "; the cut lost " + lost + " reported written (its after point) but not durable: 0002.D1 syncs each record, and a new journal file's directory, before the run goes on"
	}
	got, err := r.RunWith(pctx, sc, env, protocol.RunOptions{CrashAt: crash,
		Handover: func(_, next string) error { return write(next, c.files) }})
	if err != nil {
		return []string{prefix + ": resume lost the run: " + err.Error() + " (0002.D3)"}
	}
	var counts crashpoint.Counts
	var out []string
	for _, f := range crashpoint.JudgeResume(sc, base, c.at, got, env.Snapshot(), &counts) {
		out = append(out, prefix+": "+f)
	}
	if len(out) == 0 && len(c.lost) > 0 {
		// The resume happened to come out right; the loss stands.
		out = append(out, prefix)
	}
	return out
}

func write(dir string, files map[string][]byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for rel, data := range files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// markers reads the journal points among the lines written to stdout.
func markers(data []byte) []protocol.Point {
	var out []protocol.Point
	for _, line := range bytes.Split(data, []byte("\n")) {
		if !bytes.Contains(line, []byte(`"journal_point"`)) {
			continue
		}
		var m struct {
			Point *protocol.Point `json:"point"`
			Phase int             `json:"phase"`
		}
		if json.Unmarshal(line, &m) == nil && m.Point != nil {
			m.Point.Phase = m.Phase
			out = append(out, *m.Point)
		}
	}
	return out
}

// phaseDir is the phase whose journal path is: the index that names its
// directory under dir in a phased run (dir/1, dir/1/journal.jsonl), else 0.
func phaseDir(path, dir string) int {
	rel, err := filepath.Rel(dir, path)
	if err != nil {
		return 0
	}
	first, _, _ := strings.Cut(rel, "/")
	if n, err := strconv.Atoi(first); err == nil && n > 0 {
		return n // the phase's directory itself, or a file in it
	}
	return 0
}

// phaseOf names a record's phase journal in a phased run ("phase 1 "), or "".
func phaseOf(p protocol.Point) string {
	if p.Phase == 0 {
		return ""
	}
	return "phase " + strconv.Itoa(p.Phase) + " "
}

func under(path, dir string) bool {
	return path == dir || strings.HasPrefix(path, dir+"/")
}

func digest(files map[string][]byte) string {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	h := sha256.New()
	for _, n := range names {
		fmt.Fprintf(h, "%s %d\n", n, len(files[n]))
		h.Write(files[n])
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}
