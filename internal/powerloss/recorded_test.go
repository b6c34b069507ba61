package powerloss

import (
	"slices"
	"strings"
	"testing"

	"github.com/polyloop/polyloop-conform/fakes"
	"github.com/polyloop/polyloop-conform/internal/fsrecord"
	"github.com/polyloop/polyloop-conform/internal/protocol"
)

// TestUnlinkDurableWithItsDirectory: a removal, like a new name, is
// durable only once its directory is synced; until then a power cut may
// keep the file with its synced contents (docs/limits.md).
func TestUnlinkDurableWithItsDirectory(t *testing.T) {
	d := &Disk{}
	h := map[string]*handle{}
	for _, op := range []fsrecord.Op{
		{Kind: fsrecord.Create, Path: "hot"},
		{Kind: fsrecord.Write, Path: "hot", Data: []byte("undo")},
		{Kind: fsrecord.Sync, Path: "hot"},
		{Kind: fsrecord.SyncDir, Path: "."},
		{Kind: fsrecord.Unlink, Path: "hot"},
	} {
		applyRecorded(d, h, op)
	}
	kept := func() []string {
		var out []string
		for _, s := range d.SomeStates() {
			out = append(out, string(s.Files["hot"]))
		}
		return out
	}
	if got := kept(); !slices.Contains(got, "undo") || !slices.Contains(got, "") {
		t.Fatalf("before the directory sync a cut keeps the removed file or not; states hold %q", got)
	}
	applyRecorded(d, h, fsrecord.Op{Kind: fsrecord.SyncDir, Path: "."})
	if got := kept(); slices.Contains(got, "undo") {
		t.Fatalf("after the directory sync the removal is durable; states hold %q", got)
	}
}

// schedule of one step: run_started, a model call, its output, the
// intent, the handler call, the result, run_end.
func oneStep() *schedule {
	p := func(when, rec string, seq, step int) item {
		return item{point: &protocol.Point{When: when, Record: rec, Seq: seq, Step: step}}
	}
	c := func(kind, tool string) item {
		return item{call: &fakes.Call{Kind: kind, Tool: tool, Step: 1}}
	}
	return &schedule{items: []item{
		p("before", "run_started", 1, 0), p("after", "run_started", 1, 0),
		c(fakes.CallModel, ""),
		p("before", "model_output", 2, 1), p("after", "model_output", 2, 1),
		p("before", "action_intent", 3, 1), p("after", "action_intent", 3, 1),
		c(fakes.CallHandler, "submit"),
		p("before", "action_result", 4, 1), p("after", "action_result", 4, 1),
		p("before", "run_end", 5, 0), p("after", "run_end", 5, 0),
	}}
}

// TestJudgedByTheWire: the points a cut amounts to lie between the last
// call the runner saw and the next; the records proven written are those
// before that call; the record lost is the first proven one the resumed
// process redid.
func TestJudgedByTheWire(t *testing.T) {
	s := oneStep()
	m := moment{calls: 2} // the handler call was seen: the intent was written
	var names []string
	for _, p := range s.candidates(m) {
		names = append(names, p.When+":"+p.Record)
	}
	if want := "before:action_result after:action_result before:run_end after:run_end"; strings.Join(names, " ") != want {
		t.Errorf("candidates %q, want %q", names, want)
	}
	recs, _ := s.proven(m)
	if len(recs) != 3 || recs[2].Record != "action_intent" {
		t.Errorf("proven %v, want the three records before the handler call", recs)
	}
	// The resumed process asked the model for step 1 again: the model
	// output, proven written by the handler call after it, was lost.
	lost := s.lostRecord(m, &fakes.Call{Kind: fakes.CallModel, Step: 1})
	if !strings.HasPrefix(lost, "record 2 (model_output:step1)") || !strings.Contains(lost, "the call of handler submit for step 1") {
		t.Errorf("lost %q", lost)
	}
	// Before any call, nothing is proven.
	if recs, _ := s.proven(moment{}); len(recs) != 0 {
		t.Errorf("proven before any call: %v", recs)
	}
	// A resumed process's handler call, a SAFE replay of the first, falls
	// where that one ran: two calls into the schedule, not three.
	if n := s.callsThrough(s.position(fakes.Call{Kind: fakes.CallHandler, Tool: "submit", Step: 1})); n != 2 {
		t.Errorf("a replayed handler call stands %d calls into the schedule, want 2", n)
	}
	// After the result, every record.
	if recs, _ := s.proven(moment{calls: 2, result: true}); len(recs) != 5 {
		t.Errorf("proven after the result: %v", recs)
	}
}

// TestSyncFSMakesAllDurable: a syncfs of the journal's file system, or a
// sync, makes everything written on it so far durable, data and names, as
// an fsync of every file and directory would: a new file's name, a file
// in a second directory, a rename over and a removal all survive any cut.
func TestSyncFSMakesAllDurable(t *testing.T) {
	d := &Disk{TearInside: true}
	h := map[string]*handle{}
	for _, op := range []fsrecord.Op{
		{Kind: fsrecord.Create, Path: "old"},
		{Kind: fsrecord.Write, Path: "old", Data: []byte("gone")},
		{Kind: fsrecord.Sync, Path: "old"},
		{Kind: fsrecord.SyncDir, Path: "."},
		{Kind: fsrecord.Create, Path: "journal"},
		{Kind: fsrecord.Write, Path: "journal", Data: []byte("record 1\n")},
		{Kind: fsrecord.Create, Path: "sub/db"},
		{Kind: fsrecord.Write, Path: "sub/db", Data: []byte("row")},
		{Kind: fsrecord.Create, Path: "tmp"},
		{Kind: fsrecord.Write, Path: "tmp", Data: []byte("new")},
		{Kind: fsrecord.Rename, Path: "tmp", To: "state"},
		{Kind: fsrecord.Unlink, Path: "old"},
		{Kind: fsrecord.SyncFS},
	} {
		applyRecorded(d, h, op)
	}
	want := map[string]string{"journal": "record 1\n", "sub/db": "row", "state": "new"}
	for _, s := range d.SomeStates() {
		if len(s.Files) != len(want) {
			t.Errorf("a cut after syncfs leaves %q (%s), want %q", s.Files, s.Note, want)
			continue
		}
		for p, data := range want {
			if string(s.Files[p]) != data {
				t.Errorf("a cut after syncfs leaves %s = %q (%s), want %q", p, s.Files[p], s.Note, data)
			}
		}
	}
}
