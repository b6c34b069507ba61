package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/polyloop/polyloop-conform/scenarios"
)

// TestReadme_runFlag holds the README's sentence on --run to what the
// flag does: a scenario runs when any pattern matches it, and a pattern
// that matches nothing fails the run. (The README said "every pattern
// must match", which reads as the opposite of the first rule.)
func TestReadme_runFlag(t *testing.T) {
	page, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(page)), " ")
	m := regexp.MustCompile("`--run '([^']+)'` \\(([^)]*)\\)").FindStringSubmatch(text)
	if m == nil {
		t.Fatal("README.md no longer explains --run with an example in backquotes and a parenthesis")
	}
	for _, claim := range []string{"any of the patterns matches", "a pattern that matches no scenario fails the run"} {
		if !strings.Contains(m[2], claim) {
			t.Errorf("README.md says of --run %q; it must say %q", m[2], claim)
		}
	}
	all, err := scenarios.LoadEmbedded()
	if err != nil {
		t.Fatal(err)
	}
	pats := strings.Split(m[1], ",")
	got, err := selectScenarios(all, m[1])
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range pats {
		one, err := selectScenarios(all, p)
		if err != nil {
			t.Fatal(err)
		}
		n += len(one)
	}
	if len(got) != n || len(pats) < 2 {
		t.Errorf("--run %s selects %d scenarios, its patterns one by one %d: a scenario runs when any pattern matches", m[1], len(got), n)
	}
	if _, err := selectScenarios(all, m[1]+",no-such.*"); err == nil || !strings.Contains(err.Error(), "matches no scenario") {
		t.Errorf("a pattern that matches nothing: %v", err)
	}
}

// TestProtocolDoc_journalPoints holds docs/protocol.md's table of which
// messages carry journal_dir and report_journal_points to the runner's
// transcripts. (The page said a run with a next holder comes "without
// journal points" while its examples showed report_journal_points: true.)
func TestProtocolDoc_journalPoints(t *testing.T) {
	t.Parallel()
	exe := selfImpl(t)
	rows := docTable(t, "../../docs/protocol.md", "<!-- journal points:", "<!-- end of journal points -->")
	// One scenario of each kind a row names.
	byRow := map[string]string{
		"`run` of a scenario with a crash point (`faults.crash`)":                                     "resume.after-end",
		"`run` of a scenario with a journal write fault (`faults.journal_error`)":                     "journal.result-write-error",
		"`run` of a scenario with a next holder (`faults.resume`)":                                    "cancel.resume-after-safe-tool",
		"`run` of any other scenario":                                                                 "outcome.normal-return",
		"`resume`, in the new process":                                                                "resume.after-end",
		"`resume` to the second process of a scenario with a second crash (`faults.crash_on_resume`)": "resume.crash-again-after-resume",
	}
	if len(rows) != len(byRow) {
		t.Fatalf("docs/protocol.md's journal-points table has %d rows, the test knows %d", len(rows), len(byRow))
	}
	dir := t.TempDir()
	ids := []string{"resume.after-end", "journal.result-write-error", "cancel.resume-after-safe-tool", "outcome.normal-return", "resume.crash-again-after-resume"}
	if code, out, errs := run(t, "run", "--impl", exe+" serve-reference", "--run", strings.Join(ids, ","), "--transcripts", dir); code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	for _, r := range rows {
		id, ok := byRow[r[0]]
		if !ok {
			t.Errorf("docs/protocol.md: row %q names no kind of run the test knows", r[0])
			continue
		}
		kind := "run"
		if strings.HasPrefix(r[0], "`resume`") {
			kind = "resume"
		}
		msg := sentMessage(t, filepath.Join(dir, id+".jsonl"), kind)
		got := []string{yesNo(msg["journal_dir"] != nil), yesNo(msg["report_journal_points"] == true)}
		if got[0] != r[1] || got[1] != r[2] {
			t.Errorf("docs/protocol.md says %s carries journal_dir %s, report_journal_points %s; the runner sent %s, %s (%s)", r[0], r[1], r[2], got[0], got[1], id)
		}
	}
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// sentMessage is the first message of a type the runner sent in a
// transcript.
func sentMessage(t *testing.T, file, kind string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		var l struct {
			From    string         `json:"from"`
			Message map[string]any `json:"message"`
		}
		if json.Unmarshal([]byte(line), &l) == nil && l.From == "runner" && l.Message["type"] == kind {
			return l.Message
		}
	}
	t.Fatalf("%s: the runner sent no %s", file, kind)
	return nil
}

// docTable returns the cells of the rows of the table between two
// markers of a Markdown page, the header and the rule left out.
func docTable(t *testing.T, file, begin, end string) [][]string {
	t.Helper()
	page, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	s := string(page)
	i, j := strings.Index(s, begin), strings.Index(s, end)
	if i < 0 || j < i {
		t.Fatalf("%s has no table between %q and %q", file, begin, end)
	}
	var rows [][]string
	for n, line := range strings.Split(s[i:j], "\n") {
		if !strings.HasPrefix(line, "|") || n < 3 {
			continue
		}
		var cells []string
		for _, c := range strings.Split(strings.Trim(line, "|"), "|") {
			cells = append(cells, strings.TrimSpace(c))
		}
		rows = append(rows, cells)
	}
	return rows
}
