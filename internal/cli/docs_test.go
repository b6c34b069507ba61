package cli

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/polyloop/polyloop-conform/internal/atomicfile"
	"github.com/polyloop/polyloop-conform/scenarios"
)

var updateDocs = flag.Bool("update-docs", false, "rewrite the generated blocks of docs/protocol.md from a run of the suite")

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

// TestProtocolDoc_evidenceCounts regenerates docs/protocol.md's counts of
// what the protocol options change (events and measured blocks sent, and
// what the passes rest on: observed, taken on trust, self-reported) from
// two runs of the whole suite, and fails when the page says other
// numbers: they drift whenever a scenario or a check is added (the page
// said 113 and 12 → 123 and 2 when the suite gave 121 and 13 → 132 and
// 2). -update-docs rewrites the block.
func TestProtocolDoc_evidenceCounts(t *testing.T) {
	requireLong(t, "two whole-suite runs over the protocol to count docs/protocol.md's figures")
	t.Parallel()
	exe := selfImpl(t)
	type passes struct{ Observed, Trusted, Self int }
	counts := func(impl, transcripts string) passes {
		out := filepath.Join(t.TempDir(), "report.json")
		// --require none: the self-reported passes are counted, not failed.
		// --generate 0: the page counts the suite's scenarios, not the
		// generated batch that follows them.
		args := []string{"run", "--impl", impl, "-p", "4", "--require", "none", "--generate", "0", "--format", "json", "--out", out}
		if transcripts != "" {
			args = append(args, "--transcripts", transcripts)
		}
		if code, stdout, errs := runBuilt(t, args...); code != ExitOK {
			t.Fatalf("%s: exit %d\n%s\n%s", impl, code, stdout, errs)
		}
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		var rep struct {
			Counts struct {
				Observed int `json:"passed_observed"`
				Trusted  int `json:"passed_trusted"`
				Self     int `json:"passed_self_reported"`
			} `json:"counts"`
		}
		if err := json.Unmarshal(data, &rep); err != nil {
			t.Fatal(err)
		}
		return passes{rep.Counts.Observed, rep.Counts.Trusted, rep.Counts.Self}
	}
	plain := counts(exe+" serve-reference --plain", "")
	dir := t.TempDir()
	all := counts(exe+" serve-reference", dir)
	if all.Self != 0 {
		t.Errorf("with every option, %d passes are still self-reported; the page's sentence says none are", all.Self)
	}
	events, blocks := 0, 0
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		events += strings.Count(string(data), `{"from":"implementation","message":{"type":"event",`)
		blocks += strings.Count(string(data), `{"from":"implementation","message":{"type":"measure_call",`)
	}
	if events == 0 || blocks == 0 {
		t.Fatalf("the transcripts hold %d events and %d measure calls: the runner's transcript format changed", events, blocks)
	}
	text := fmt.Sprintf("The whole suite sends %s events and %s measured blocks. The verdicts: with every option %d\n"+
		"passes observed and %d taken on trust; `serve-reference --plain` %d observed, %d taken on trust\n"+
		"and %d self-reported (which the default `--require observed` fails).\n",
		thousands(events), thousands(blocks), all.Observed, all.Trusted, plain.Observed, plain.Trusted, plain.Self)
	replaceBlock(t, "../../docs/protocol.md", "<!-- evidence:", "<!-- end of evidence -->", text)
}

// thousands writes n with a comma between thousands, as the docs do.
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// replaceBlock checks that the text between the line of a begin marker
// and an end marker is want, rewriting it under -update-docs.
func replaceBlock(t *testing.T, file, begin, end, want string) {
	t.Helper()
	page, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	s := string(page)
	i, j := strings.Index(s, begin), strings.Index(s, end)
	if i < 0 || j < i {
		t.Fatalf("%s has no block between %q and %q", file, begin, end)
	}
	i += strings.IndexByte(s[i:], '\n') + 1
	if s[i:j] == want {
		return
	}
	if *updateDocs {
		if err := atomicfile.Write(file, []byte(s[:i]+want+s[j:])); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s says:\n%s\nthe suite gives:\n%s\n(go test ./internal/cli -run %s -args -update-docs rewrites it)", file, s[i:j], want, t.Name())
}
