package trajectories_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/polyloop/polyloop-conform/docs/design"
	"github.com/polyloop/polyloop-conform/internal/decisions"
	"github.com/polyloop/polyloop-conform/trajectories"
)

const formatDoc = "../docs/trajectory-format.md"

// TestFormatDocResumedRun: every rule of "A resumed run's trajectory"
// cites a decision record that exists and a scenario whose golden shows it.
func TestFormatDocResumedRun(t *testing.T) {
	page, err := os.ReadFile(formatDoc)
	if err != nil {
		t.Fatal(err)
	}
	s := string(page)
	i := strings.Index(s, "## A resumed run's trajectory")
	if i < 0 {
		t.Fatalf("%s has no section \"A resumed run's trajectory\"", formatDoc)
	}
	sec := s[i:]
	sec = sec[:strings.Index(sec[3:], "\n## ")+3]
	set, err := decisions.Load(design.FS)
	if err != nil {
		t.Fatal(err)
	}
	goldens, err := trajectories.Goldens()
	if err != nil {
		t.Fatal(err)
	}
	id := regexp.MustCompile(`\b\d{4}\.D\d+(\.[a-z][a-z0-9-]*[a-z0-9])*`)
	scenario := regexp.MustCompile("`([a-z]+\\.[a-z0-9-]+)`")
	bullets := strings.Split(sec, "\n- ")[1:]
	if len(bullets) < 6 {
		t.Fatalf("the section has %d rules; it answers at least six questions", len(bullets))
	}
	for _, b := range bullets {
		name := strings.SplitN(b, "\n", 2)[0]
		ids := id.FindAllString(b, -1)
		if len(ids) == 0 {
			t.Errorf("rule %q cites no decision record", name)
		}
		for _, d := range ids {
			if _, ok := set.ByID[d]; !ok {
				t.Errorf("rule %q cites %s, which no record defines", name, d)
			}
		}
		shown := 0
		for _, m := range scenario.FindAllStringSubmatch(b, -1) {
			if _, ok := goldens[m[1]]; ok {
				shown++
			}
		}
		if shown == 0 {
			t.Errorf("rule %q names no scenario whose golden shows it", name)
		}
	}
}

// TestResumedGoldensFollowTheDoc checks the rules of "A resumed run's
// trajectory" that a golden shows by itself, on every golden: no
// end.detail.during anywhere; a resumed run that found its end emits
// nothing; every other resumed run's stream starts with run_resumed; a
// step that ends resume_outcome_unknown has no model_step; a replayed
// step's settlement event says replayed.
func TestResumedGoldensFollowTheDoc(t *testing.T) {
	goldens, err := trajectories.Goldens()
	if err != nil {
		t.Fatal(err)
	}
	resumed := 0
	for id, data := range goldens {
		tr, _, err := trajectories.Parse(id, data)
		if err != nil {
			t.Fatal(err)
		}
		ends := []*trajectories.End{tr.End}
		for i := range tr.Phases {
			ends = append(ends, &tr.Phases[i].End)
		}
		for _, e := range ends {
			if e != nil && e.Detail != nil && e.Detail.During != "" {
				t.Errorf("%s: end.detail.during is %q; a run that follows the design never writes it", id, e.Detail.During)
			}
		}
		if tr.Resume == nil {
			continue
		}
		resumed++
		if tr.Resume.From == "run_end" {
			if len(tr.Events) != 0 {
				t.Errorf("%s: resumed from its recorded end, yet emitted %d events", id, len(tr.Events))
			}
			continue
		}
		if len(tr.Events) > 0 && tr.Events[0].Type != "run_resumed" {
			t.Errorf("%s: a resumed stream starts with %s, not run_resumed", id, tr.Events[0].Type)
		}
		if tr.End != nil && tr.End.Reason == "resume_outcome_unknown" {
			for _, ev := range tr.Events {
				if ev.Type == "model_step" && ev.Step == tr.End.Detail.Step {
					t.Errorf("%s: a model_step for step %d, which ended resume_outcome_unknown", id, ev.Step)
				}
			}
		}
		for _, st := range tr.Steps {
			if !st.Replayed || settledBefore(tr, st) {
				// A step an earlier resume replayed and journalled is
				// rebuilt from the journal: its events were that
				// process's (resume.crash-again-after-resume).
				continue
			}
			ok := false
			for _, ev := range tr.Events {
				ok = ok || (ev.Step == st.Index && ev.Phase == st.Phase && ev.Replayed && ev.Type != "model_step")
			}
			if !ok {
				t.Errorf("%s: step %d was replayed, but no settlement event says so", id, st.Index)
			}
		}
	}
	if resumed < 10 {
		t.Fatalf("only %d resumed goldens: the check has nothing to hold", resumed)
	}
}

// TestImplementingGuideCitesRecords: every decision record docs/implementing.md
// cites, in any section (the guesses table above all), exists.
func TestImplementingGuideCitesRecords(t *testing.T) {
	page, err := os.ReadFile("../docs/implementing.md")
	if err != nil {
		t.Fatal(err)
	}
	set, err := decisions.Load(design.FS)
	if err != nil {
		t.Fatal(err)
	}
	id := regexp.MustCompile(`\b\d{4}\.D\d+(\.[a-z][a-z0-9-]*[a-z0-9])*`)
	cited := id.FindAllString(string(page), -1)
	if len(cited) < 50 {
		t.Fatalf("docs/implementing.md cites %d records; the pattern is stale", len(cited))
	}
	for _, c := range cited {
		if _, ok := set.ByID[c]; !ok {
			t.Errorf("docs/implementing.md cites %s, which no record defines", c)
		}
	}
}

// settledBefore reports whether st was settled before the process whose
// events tr holds resumed: the stream's run_resumed names the first step
// that process ran.
func settledBefore(tr *trajectories.Trajectory, st trajectories.Step) bool {
	if len(tr.Events) == 0 || tr.Events[0].Type != "run_resumed" {
		return false
	}
	first := tr.Events[0]
	return st.Phase < first.Phase || (st.Phase == first.Phase && st.Index < first.Step)
}
