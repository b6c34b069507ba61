package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestBriefNamesTheOneCause: against a kernel whose context size is off by
// one, the brief report's first cause names the field, the decision that
// governs it and how many scenarios show it, in under 15 lines.
func TestBriefNamesTheOneCause(t *testing.T) {
	t.Parallel()
	selfImpl(t)
	// A report's text over fifty scenarios: through the build without the
	// race detector (runBuilt), as the other report-only runs.
	code, out, errs := runBuilt(t, "run", "--impl", "sh testdata/impls/context-size-off-by-one.sh", "--brief", "-p", "4", "--run", "context.*,budget.*,outcome.*,parse.*,history.*")
	if code != ExitFail {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) >= 15 {
		t.Errorf("--brief printed %d lines:\n%s", len(lines), out)
	}
	// The runner measures every block, so the cause is its check of the
	// sum against its own answers, which replaces the golden's comparison.
	first := regexp.MustCompile(`^  steps\[\*\]\.context_size: the trajectory disagrees with what the implementation sent in (\d+) scenarios — 0010\.D5; first: `)
	m := first.FindStringSubmatch(lines[3])
	if m == nil {
		t.Fatalf("first cause is not the context size:\n%s", out)
	}
	failed := regexp.MustCompile(`(\d+) failed`).FindStringSubmatch(lines[len(lines)-1])
	if n, _ := strconv.Atoi(m[1]); failed == nil || n < 20 || strconv.Itoa(n) != failed[1] {
		t.Errorf("the cause covers %s scenarios, the run failed %v:\n%s", m[1], failed, out)
	}
}

// TestShardsMergeIntoTheWholeRun: run and explore as three shards, merged,
// report what the unsharded run reports (timings and the shard note
// aside).
func TestShardsMergeIntoTheWholeRun(t *testing.T) {
	t.Parallel()
	selfImpl(t)
	dir := t.TempDir()
	// A suite of seven scenarios, so that each of three shards holds some
	// and the whole run is not the suite's 130 four times over.
	scen := scenarioDir(t, "outcome.normal-return", "outcome.env-error", "context.order", "parse.fenced-json", "resume.safe-replayed", "cancel.during-model-call", "validation.unknown-tool")
	for _, cmd := range []struct {
		name string
		args []string
	}{
		// docs/sharding.md's command, without --run: it panicked (the
		// shard filter wrote over the suite's own list of scenarios).
		{"run-all", []string{"run", "--scenarios", scen}},
		// explore shards the crash points: the three parts of one failing
		// scenario's row (10 points) merge into the whole run's row.
		{"explore", []string{"explore", "--impl", "sh testdata/impls/replays-never.sh", "--run", "resume.never-crash-before-intent", "-p", "4"}},
	} {
		whole := filepath.Join(dir, cmd.name+"-whole.json")
		runBuilt(t, append(cmd.args, "--format", "json", "--out", whole)...)
		var parts []string
		for k := 1; k <= 3; k++ {
			part := filepath.Join(dir, cmd.name+"-"+strconv.Itoa(k)+".json")
			runBuilt(t, append(cmd.args, "--shard", strconv.Itoa(k)+"/3", "--format", "json", "--out", part)...)
			parts = append(parts, part)
		}
		merged := filepath.Join(dir, cmd.name+"-merged.json")
		if code, out, errs := run(t, append([]string{"merge", "--format", "json", "--out", merged}, parts...)...); code != ExitOK && code != ExitFail {
			t.Fatalf("merge: exit %d\n%s\n%s", code, out, errs)
		}
		if a, b := normalized(t, whole), normalized(t, merged); a != b {
			al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
			for i := range min(len(al), len(bl)) {
				if al[i] != bl[i] {
					t.Errorf("%s: merged shards differ from the whole run at line %d:\nwhole:  %s\nmerged: %s", cmd.name, i+1, al[i], bl[i])
					break
				}
			}
			if len(al) != len(bl) {
				t.Errorf("%s: whole run %d lines, merged %d", cmd.name, len(al), len(bl))
			}
		}
	}

}

// normalized reads a JSON report without what differs between runs:
// timings and the time stamp.
func normalized(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	delete(doc, "generated_at")
	rows, _ := doc["scenarios"].([]any)
	for _, r := range rows {
		delete(r.(map[string]any), "duration_ns")
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", " ")
	enc.Encode(doc)
	return buf.String()
}

// TestStrictReportCountsWordingApart: the reference with every sentence
// the design leaves open reworded fails under --strict on those
// sentences alone. The report marks each such problem as wording, counts
// the rows apart (report.TestStrictWording holds the per-decision counts
// and the HTML to the same).
func TestStrictReportCountsWordingApart(t *testing.T) {
	t.Parallel()
	selfImpl(t)
	out := filepath.Join(t.TempDir(), "report.json")
	code, stdout, errs := run(t, "run", "--impl", selfImpl(t)+" serve-reference --reword", "--strict", "--run", "journal.result-write-error,outcome.no-tool-call,completion.by-tool", "--format", "json", "--out", out)
	if code != ExitFail {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, ExitFail, stdout, errs)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Counts struct {
			Passed, Failed, Wording int
		} `json:"counts"`
		Scenarios []struct {
			Scenario string
			Verdict  string
			Problems []struct {
				Path, Class string
				Wording     bool
			}
		} `json:"scenarios"`
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Counts.Failed != 2 || rep.Counts.Wording != 2 || rep.Counts.Passed != 1 {
		t.Errorf("counts %+v, want 1 passed and 2 failed, both on wording alone", rep.Counts)
	}
	for _, s := range rep.Scenarios {
		for _, p := range s.Problems {
			if !p.Wording || p.Class != "text" {
				t.Errorf("%s: problem at %s (class %s) is not marked wording", s.Scenario, p.Path, p.Class)
			}
		}
	}
}
