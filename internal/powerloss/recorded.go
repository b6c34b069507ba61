package powerloss

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/polyloop/polyloop-conform/fakes"
	"github.com/polyloop/polyloop-conform/internal/crashpoint"
	"github.com/polyloop/polyloop-conform/internal/fsrecord"
	"github.com/polyloop/polyloop-conform/internal/protocol"
	"github.com/polyloop/polyloop-conform/scenarios"
	"github.com/polyloop/polyloop-conform/trajectories"
)

// RecordedOptions configure the power-loss exploration of an
// implementation whose journal lives on the runner's file-system recorder.
type RecordedOptions struct {
	Timeout  time.Duration
	Parallel int
	Recorder *fsrecord.Recorder
}

// item is one thing the uninterrupted run with journal points showed, in
// order: a call on the wire, or a journal point.
type item struct {
	call  *fakes.Call
	point *protocol.Point
}

// schedule is that run: its baseline and its items.
type schedule struct {
	base  *crashpoint.Baseline
	items []item
}

// moment is one disk state a power cut leaves, and how much of the wire
// the runner had seen when it came: calls, and the result.
type moment struct {
	// phase is the phase whose journal the last recorded call wrote (its
	// directory's index), 0 in a single run.
	phase  int
	where  string
	files  map[string][]byte
	calls  int
	result bool
}

// ExploreRecorded explores the power cuts of sc on any implementation,
// with its journal_dir on the recorder. A run with journal points (not
// recorded) gives the schedule: where each record falls among the calls.
// A second run, recorded, asks for no journal points: the recorder keeps
// every call that changes the file system, each stamped with how much of
// the wire the runner had seen. After each call, the states a power cut
// leaves are built (synced data kept, unsynced data lost, torn or kept,
// a name or a removal lost until its directory is synced); each is
// handed to a process that resumes it (itself recorded) and judged like
// a kill at the journal points the wire allows: every record written
// before the last call the runner saw was reported written (0002.D1),
// wherever the implementation keeps it. One resumed process's own
// recording is then cut the same way, and each of its states resumed.
func ExploreRecorded(ctx context.Context, r crashpoint.Runner, sc *scenarios.Scenario, o RecordedOptions) TracedResult {
	res := TracedResult{Scenario: sc.ID}
	plain := crashpoint.WithoutCrash(sc)
	sched, err := pointsRun(ctx, r, plain, o.Timeout)
	if err != nil {
		res.Baseline = err
		return res
	}
	ops, calls, err := recordRun(ctx, r, plain, o)
	if err != nil {
		res.Baseline = err
		return res
	}
	if want := len(sched.calls()); calls != want {
		res.Baseline = fmt.Errorf("the recorded run made %d calls, the run with journal points %d: the schedule differs when journal points are asked", calls, want)
		return res
	}
	moments := cutMoments(&Disk{TearInside: true, OneTear: true}, ops, calls, "")
	res.States = len(moments)
	var mu sync.Mutex
	var second []resumed
	g := new(errgroup.Group)
	g.SetLimit(max(1, o.Parallel))
	for _, m := range moments {
		g.Go(func() error {
			if ctx.Err() != nil {
				return nil
			}
			found, rs := judgeMoment(ctx, r, plain, sched, m, o)
			mu.Lock()
			res.Failures = append(res.Failures, found...)
			if rs != nil && len(found) == 0 {
				second = append(second, *rs)
			}
			mu.Unlock()
			return nil
		})
	}
	_ = g.Wait()
	if len(res.Failures) == 0 && ctx.Err() == nil {
		n, found := exploreResumed(ctx, r, plain, sched, pickResumed(second), o)
		res.States += n
		res.Failures = append(res.Failures, found...)
	}
	slices.Sort(res.Failures)
	return res
}

// pointsRun runs sc uninterrupted with journal points, off the recorder.
func pointsRun(ctx context.Context, r crashpoint.Runner, sc *scenarios.Scenario, timeout time.Duration) (*schedule, error) {
	env := fakes.New(sc, nil)
	var points []protocol.Point
	var mu sync.Mutex
	bctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	got, err := r.RunWith(bctx, sc, env, protocol.RunOptions{Points: true, OnPoint: func(p protocol.Point) {
		mu.Lock()
		points = append(points, p)
		mu.Unlock()
	}})
	if err != nil {
		return nil, err
	}
	snap := env.Snapshot()
	got.HandlerCalls, got.ModelCalls = snap.HandlerCalls, snap.ModelCalls
	base, err := crashpoint.NewBaseline(got, points, snap.HandlerCalls)
	if err != nil {
		return nil, err
	}
	s := &schedule{base: base}
	next := 0
	for _, c := range snap.Log {
		switch {
		case isCall(c.Kind):
			s.items = append(s.items, item{call: &c})
		case c.Kind == fakes.CallPoint && next < len(points):
			s.items = append(s.items, item{point: &points[next]})
			next++
		}
	}
	return s, nil
}

func isCall(kind string) bool {
	return kind == fakes.CallModel || kind == fakes.CallHandler || kind == fakes.CallExecute
}

// calls returns the indexes of the schedule's calls.
func (s *schedule) calls() []int {
	var out []int
	for i, it := range s.items {
		if it.call != nil {
			out = append(out, i)
		}
	}
	return out
}

// wireCalls counts the calls made by processes from first on.
func wireCalls(env *fakes.Env, first int) func() int {
	return func() int {
		n := 0
		for _, c := range env.Snapshot().Log {
			if isCall(c.Kind) && c.Process >= first {
				n++
			}
		}
		return n
	}
}

// RandomName is a directory name nothing can be keyed on: ten random
// lowercase letters.
func RandomName() string {
	const letters = "abcdefghijklmnopqrstuvwxyz"
	b := make([]byte, 10)
	rand.Read(b)
	for i := range b {
		b[i] = letters[int(b[i])%len(letters)]
	}
	return string(b)
}

// recordRun runs sc uninterrupted, without journal points, its
// journal_dir on the recorder, and returns what the recorder saw and how
// many calls crossed the wire.
func recordRun(ctx context.Context, r crashpoint.Runner, sc *scenarios.Scenario, o RecordedOptions) ([]fsrecord.Op, int, error) {
	env := fakes.New(sc, nil)
	name := RandomName()
	w := o.Recorder.Watch(name, wireCalls(env, 0))
	defer os.RemoveAll(filepath.Join(o.Recorder.Backing(), name))
	rctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	_, err := r.RunWith(rctx, sc, env, protocol.RunOptions{NoPoints: true, JournalDir: filepath.Join(o.Recorder.Mountpoint(), name)})
	ops := w.Stop()
	if err != nil {
		return nil, 0, err
	}
	return ops, wireCalls(env, 0)(), nil
}

// cutMoments applies ops to d in order and, after each, lists the states
// a power cut then leaves, each once; the last op's are after the result.
func cutMoments(d *Disk, ops []fsrecord.Op, calls int, prefix string) []moment {
	h := map[string]*handle{}
	seen := map[string]bool{}
	var out []moment
	for i, op := range ops {
		applyRecorded(d, h, op)
		if i+1 < len(ops) && op.Kind == fsrecord.Write && ops[i+1].Kind == fsrecord.Write && ops[i+1].Wire == op.Wire {
			// Inside a burst of writes, with no sync and no call between:
			// the cut after its last write keeps any part of it (lost,
			// torn, kept), which stands for the cuts inside it.
			continue
		}
		m := moment{calls: calls, result: true}
		if i+1 < len(ops) {
			m = moment{calls: ops[i+1].Wire}
		}
		for _, s := range d.SomeStates() {
			key := fmt.Sprintf("%d %v %s", m.calls, m.result, digest(s.Files))
			if seen[key] {
				continue
			}
			seen[key] = true
			m.files, m.where, m.phase = s.Files, prefix+"power cut after "+describe(op), phaseDir(filepath.Join("/", op.Path), "/")
			if s.Note != "" {
				m.where += " (" + s.Note + ")"
			}
			out = append(out, m)
		}
	}
	return out
}

func describe(op fsrecord.Op) string {
	switch op.Kind {
	case fsrecord.Write:
		return fmt.Sprintf("a write of %d bytes to %s at %d", len(op.Data), op.Path, op.Offset)
	case fsrecord.Rename, fsrecord.Link:
		return op.Kind + " of " + op.Path + " to " + op.To
	case fsrecord.SyncFS:
		return "syncfs"
	}
	return op.Kind + " of " + op.Path
}

// applyRecorded is the one conversion of a recorded call to an operation
// of the modelled disk. Directories are taken as durable once made.
func applyRecorded(d *Disk, h map[string]*handle, op fsrecord.Op) {
	d.mu.Lock()
	d.init()
	f := d.files[op.Path]
	d.mu.Unlock()
	file := func() *handle {
		if f == nil || f.unlinked {
			d.Create(op.Path) // a file the recording met already made
		}
		if h[op.Path] == nil {
			h[op.Path] = &handle{d: d, path: op.Path}
		}
		return h[op.Path]
	}
	switch op.Kind {
	case fsrecord.Create:
		d.Create(op.Path)
		h[op.Path] = &handle{d: d, path: op.Path}
	case fsrecord.Write:
		fh := file()
		fh.Seek(op.Offset, 0)
		fh.Write(op.Data)
	case fsrecord.Truncate:
		file().Truncate(op.Size)
	case fsrecord.Sync:
		if f != nil {
			file().Sync()
		}
	case fsrecord.SyncDir:
		d.SyncDir(op.Path)
	case fsrecord.SyncFS:
		for p := range d.files {
			(&handle{d: d, path: p}).Sync()
			d.SyncDir(filepath.Dir(p))
		}
	case fsrecord.Rename:
		delete(h, op.Path)
		if op.Path == "" {
			return // moved in from outside: not the journal's
		}
		d.Rename(op.Path, op.To)
	case fsrecord.Unlink:
		delete(h, op.Path)
		d.Unlink(op.Path)
	case fsrecord.Link:
		if f != nil && !f.unlinked {
			d.Create(op.To)
			(&handle{d: d, path: op.To}).Write(f.data)
		}
	}
}

// candidates are the journal points a cut amounts to, by the wire alone:
// past every record written before the last call the runner saw, short
// of the next call; after the result, the run's last point.
func (s *schedule) candidates(m moment) []protocol.Point {
	idx := s.calls()
	lo, hi := -1, len(s.items)
	if m.calls > 0 && m.calls <= len(idx) {
		lo = idx[m.calls-1]
	}
	if m.calls < len(idx) {
		hi = idx[m.calls]
	}
	if m.result {
		lo = len(s.items) - 1
		for lo > 0 && s.items[lo].point == nil {
			lo--
		}
		return []protocol.Point{*s.items[lo].point}
	}
	var out []protocol.Point
	for _, it := range s.items[lo+1 : hi] {
		if it.point != nil {
			out = append(out, *it.point)
		}
	}
	if len(out) == 0 {
		for i := lo; i >= 0; i-- {
			if p := s.items[i].point; p != nil {
				return []protocol.Point{*p}
			}
		}
	}
	return out
}

// proven lists the records the wire proves written at m: each one whose
// after point came before the last call the runner saw (or, after the
// result, every one), with its index in the schedule.
func (s *schedule) proven(m moment) (recs []protocol.Point, at []int) {
	end := -1
	if idx := s.calls(); m.calls > 0 && m.calls <= len(idx) {
		end = idx[m.calls-1]
	}
	if m.result {
		end = len(s.items)
	}
	for i, it := range s.items[:max(end, 0)] {
		if it.point != nil && it.point.When == "after" {
			recs, at = append(recs, *it.point), append(at, i)
		}
	}
	return recs, at
}

// position is the index in the schedule of the first call like c, or -1.
func (s *schedule) position(c fakes.Call) int {
	for i, it := range s.items {
		if it.call != nil && it.call.Kind == c.Kind && it.call.Phase == c.Phase && it.call.Step == c.Step && it.call.Tool == c.Tool {
			return i
		}
	}
	return -1
}

func recordName(p protocol.Point) string {
	return fmt.Sprintf("%srecord %d (%s)", phaseOf(p), p.Seq, trajectories.CrashPointName("", p.Record, p.Step)[1:])
}

func callName(c fakes.Call) string {
	switch c.Kind {
	case fakes.CallHandler:
		return fmt.Sprintf("the call of handler %s for step %d", c.Tool, c.Step)
	case fakes.CallExecute:
		return fmt.Sprintf("the executor call for step %d", c.Step)
	}
	return fmt.Sprintf("the model call for step %d", c.Step)
}

// lostRecord names the record the cut lost: the first one the wire
// proves written that the resumed process, by its first call (first),
// did not find; with no call, the last one proven.
func (s *schedule) lostRecord(m moment, first *fakes.Call) string {
	recs, at := s.proven(m)
	if len(recs) == 0 {
		return ""
	}
	if first != nil {
		j := s.position(*first)
		for i, idx := range at {
			if idx > j && j >= 0 {
				return recordName(recs[i]) + ", written before " + s.boundName(m)
			}
		}
	}
	last := len(recs) - 1
	return recordName(recs[last]) + " or a record before it, written before " + s.boundName(m)
}

func (s *schedule) lastCallBefore(m moment) int {
	if m.result {
		idx := s.calls()
		return idx[len(idx)-1]
	}
	return s.calls()[m.calls-1]
}

func (s *schedule) boundName(m moment) string {
	if m.result {
		return "the result was sent"
	}
	return callName(*s.items[s.lastCallBefore(m)].call)
}

// resumedCalls lists the calls resumed processes made, in order.
func resumedCalls(snap fakes.Record) []fakes.Call {
	var out []fakes.Call
	for _, c := range snap.Log {
		if isCall(c.Kind) && c.Process >= 1 {
			out = append(out, c)
		}
	}
	return out
}

// callsThrough counts the schedule's calls up to and including the item
// at index i (none for -1).
func (s *schedule) callsThrough(i int) int {
	n := 0
	for j, it := range s.items {
		if j > i {
			break
		}
		if it.call != nil {
			n++
		}
	}
	return n
}

// firstResumedCall is the first call a resumed process made, if any.
func firstResumedCall(snap fakes.Record) *fakes.Call {
	for _, c := range snap.Log {
		if isCall(c.Kind) && c.Process >= 1 {
			return &c
		}
	}
	return nil
}

// lossSentence is the failure's head: the moment, and the record lost.
func (s *schedule) lossSentence(m moment, first *fakes.Call) string {
	out := m.where
	if rec := s.lostRecord(m, first); rec != "" {
		out += "; the cut lost " + rec + " on the wire, so reported written, but not durable: 0002.D1 syncs each record (and a new file's directory) before the run goes on"
	}
	return out
}

// resumed is a judged resume whose own process the recorder watched.
type resumed struct {
	m     moment
	ops   []fsrecord.Op
	calls int
	made  []fakes.Call // the resumed process's calls, in order
}

// judgeMoment kills a process at the moment's first candidate point,
// hands the resuming process (on the recorder, watched) the moment's disk
// state, and judges the resume like a kill at each candidate: it passes
// if one of them passes.
func judgeMoment(ctx context.Context, r crashpoint.Runner, sc *scenarios.Scenario, s *schedule, m moment, o RecordedOptions) ([]string, *resumed) {
	cands := laterPhases(s.candidates(m), m.files)
	if len(cands) == 0 || (len(m.files) == 0 && m.calls == 0 && !m.result) {
		// Nothing on the disk and nothing on the wire: the run never
		// durably started, and nothing was reported written.
		return nil, nil
	}
	env := fakes.New(sc, nil)
	pctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	var w *fsrecord.Watch
	var root string
	got, err := r.RunWith(pctx, sc, env, protocol.RunOptions{CrashAt: crashOf(sc, cands[0]),
		Handover: func(_, next string) error {
			rel, _ := filepath.Rel(o.Recorder.Mountpoint(), next)
			w = o.Recorder.Watch(rel, wireCalls(env, 1))
			return write(filepath.Join(o.Recorder.Backing(), rel), m.files)
		},
		NextDir: func() (string, error) {
			root = RandomName()
			err := os.Mkdir(filepath.Join(o.Recorder.Backing(), root), 0o755)
			return filepath.Join(o.Recorder.Mountpoint(), root, RandomName()), err
		}})
	var ops []fsrecord.Op
	if w != nil {
		ops = w.Stop()
	}
	if root != "" {
		defer os.RemoveAll(filepath.Join(o.Recorder.Backing(), root))
	}
	snap := env.Snapshot()
	if err != nil {
		return []string{s.lossSentence(m, firstResumedCall(snap)) + ": resume lost the run: " + err.Error() + " (0002.D3)"}, nil
	}
	var fails []string
	for _, p := range cands {
		var counts crashpoint.Counts
		fails = crashpoint.JudgeResume(sc, s.base, p, got, snap, &counts)
		if len(fails) == 0 {
			return nil, &resumed{m: m, ops: ops, calls: wireCalls(env, 1)(), made: resumedCalls(snap)}
		}
	}
	head := s.lossSentence(m, firstResumedCall(snap)) + ", like a kill at " + pointName(sc, cands[len(cands)-1])
	out := make([]string, len(fails))
	for i, f := range fails {
		out[i] = head + ": " + f
	}
	return out, nil
}

// laterPhases keeps, of a phased run's candidate points, those of the
// latest phase whose journal the state holds: a kill in an earlier phase
// leaves no journal of a later one. In a single run it keeps them all.
func laterPhases(cands []protocol.Point, files map[string][]byte) []protocol.Point {
	latest := 0
	for p := range files {
		latest = max(latest, phaseDir(filepath.Join("/", p), "/"))
	}
	var out []protocol.Point
	for _, c := range cands {
		if c.Phase >= latest {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return cands
	}
	return out
}

func crashOf(sc *scenarios.Scenario, p protocol.Point) *scenarios.CrashSpec {
	c := &scenarios.CrashSpec{When: p.When, Record: p.Record, Step: p.Step}
	if sc.Request == nil {
		c.Phase = sc.Phases[p.Phase].Name
	}
	return c
}

func pointName(sc *scenarios.Scenario, p protocol.Point) string {
	name := trajectories.CrashPointName(p.When, p.Record, p.Step)
	if sc.Request == nil {
		name = sc.Phases[p.Phase].Name + ":" + name
	}
	return name
}

// pickResumed is the resume whose own recording is cut: the one that
// wrote the most (the most left to make durable), then the one that
// resumed earliest; ties go to the first moment, so the pick does not
// depend on which resume finished first.
func pickResumed(rs []resumed) *resumed {
	writes := func(r resumed) int {
		n := 0
		for _, op := range r.ops {
			if op.Kind == fsrecord.Write {
				n++
			}
		}
		return n
	}
	var best *resumed
	for i := range rs {
		r := &rs[i]
		if writes(*r) == 0 || r.calls == 0 {
			continue
		}
		if best == nil || writes(*r) > writes(*best) ||
			(writes(*r) == writes(*best) && (r.m.calls < best.m.calls || (r.m.calls == best.m.calls && r.m.where < best.m.where))) {
			best = r
		}
	}
	return best
}

// exploreResumed cuts the power during a resumed process: its disk
// starts as the state it was handed, and takes its recorded calls. Each
// state is resumed by a third process, and judged by its first call
// against what the resumed process's calls prove written.
func exploreResumed(ctx context.Context, r crashpoint.Runner, sc *scenarios.Scenario, s *schedule, rs *resumed, o RecordedOptions) (int, []string) {
	if rs == nil {
		return 0, nil
	}
	d := Restore(State{Files: rs.m.files})
	d.TearInside, d.OneTear = true, true
	moments := cutMoments(d, rs.ops, rs.calls, "in a resumed process: ")
	// The resumed process's calls continue the schedule from where its
	// first call falls in it.
	var out []string
	var mu sync.Mutex
	g := new(errgroup.Group)
	g.SetLimit(max(1, o.Parallel))
	for _, m := range moments {
		g.Go(func() error {
			if ctx.Err() != nil {
				return nil
			}
			found := judgeSecond(ctx, r, sc, s, rs, m, o)
			mu.Lock()
			out = append(out, found...)
			mu.Unlock()
			return nil
		})
	}
	_ = g.Wait()
	return len(moments), out
}

// judgeSecond resumes a state of a power cut during a resumed process in
// a third process and fails it if its first call redoes work the wire
// proved written before the cut.
func judgeSecond(ctx context.Context, r crashpoint.Runner, sc *scenarios.Scenario, s *schedule, rs *resumed, m moment, o RecordedOptions) []string {
	// The resumed process's calls seen before the cut, as a position in
	// the schedule: where its last one falls (a SAFE call replayed falls
	// where it first ran); before any, the handed-over state's bound.
	switch {
	case m.result:
		m.calls = len(s.calls())
	case m.calls > 0 && m.calls <= len(rs.made):
		m.calls = s.callsThrough(s.position(rs.made[m.calls-1]))
	default:
		m.calls = rs.m.calls
	}
	env := fakes.New(sc, nil)
	pctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	// The first process runs the phases before the cut's and dies as its
	// phase starts; the third process resumes that phase from the state.
	first := scenarios.CrashSpec{When: "before", Record: "run_started"}
	if sc.Request == nil {
		first.Phase = sc.Phases[min(m.phase, len(sc.Phases)-1)].Name
	}
	var root string
	got, err := r.RunWith(pctx, sc, env, protocol.RunOptions{CrashAt: &first,
		Handover: func(_, next string) error {
			rel, _ := filepath.Rel(o.Recorder.Mountpoint(), next)
			return write(filepath.Join(o.Recorder.Backing(), rel), m.files)
		},
		NextDir: func() (string, error) {
			root = RandomName()
			err := os.Mkdir(filepath.Join(o.Recorder.Backing(), root), 0o755)
			return filepath.Join(o.Recorder.Mountpoint(), root, RandomName()), err
		}})
	if root != "" {
		defer os.RemoveAll(filepath.Join(o.Recorder.Backing(), root))
	}
	// The third process's fakes have not seen the calls the second one
	// made (a handler or an executor scripted per call answers it as the
	// first call): what it does after its first call, and how its run
	// ends, is not the world the power cut left. Its first call is: it
	// shows where the state let it resume.
	c := firstResumedCall(env.Snapshot())
	recs, at := s.proven(m)
	if c != nil {
		j := s.position(*c)
		for i, idx := range at {
			if j >= 0 && idx > j {
				return []string{m.where + "; the cut lost " + recordName(recs[i]) + ", written before " + s.boundName(m) +
					" on the wire, so reported written, but not durable: the next process began again at " + callName(*c) + ": 0002.D1 syncs each record before the run goes on, in a resumed process as in the first"}
			}
		}
		return nil
	}
	if err == nil && got.End != nil && got.End.Reason == "resume_outcome_unknown" && got.End.Detail != nil {
		for i, p := range recs {
			if p.Record == "action_result" && p.Step == got.End.Detail.Step && p.Phase == m.phase {
				return []string{m.where + "; the cut lost " + recordName(recs[i]) + ", written before " + s.boundName(m) +
					" on the wire, so reported written, but not durable: the next process ended resume_outcome_unknown at step " + strconv.Itoa(p.Step) + " (0002.D1)"}
			}
		}
	}
	return nil
}
