package docs_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/polyloop/polyloop-conform/internal/docgen"
)

// allowed is a kind of number the prose may write by hand, with the
// reason it cannot go stale.
type allowed struct {
	file    string         // a page, or "" for every page
	pattern *regexp.Regexp // the numbers inside a match are allowed
	reason  string
}

// handWritten lists every kind of number docs/*.md and README.md may
// write outside a generated block. A figure the tool can compute (a
// count of scenarios, passes, crash points, states) belongs in a
// generated block; a measurement carries its date and machine.
var handWritten = []allowed{
	{"", regexp.MustCompile(`^\s*\d+\. `), "a numbered list's item"},
	{"", regexp.MustCompile(`^#+ .*`), "a heading (stage numbers, step numbers, the protocol's version)"},
	{"", regexp.MustCompile(`\b00\d\d\b`), "a design record's number (0002 resume)"},
	{"", regexp.MustCompile(`\bGo 1\.\d+\b`), "the Go version the module needs (go.mod)"},
	{"", regexp.MustCompile(`\bfork\(2\)`), "a manual section"},
	{"", regexp.MustCompile(`exit 130 \(SIGINT\) or 143|\b[Ee]xit(s| code| status)? (\d+/\d+|\d+)\b|\b(0|1|2|130/143) (all passed|something failed|the run could|stopped by)|is 1\)|\(exit \d\)`), "an exit code: internal/cli's Exit constants (TestExitCodesInDocs)"},
	{"", regexp.MustCompile(`\bCRC-32C?\b|UTF-8|FNV-1a|JSON Schema 2020-12|\b2020-12\b|ECMA-262`), "a standard's name"},
	{"", regexp.MustCompile(`\b(?i:before|from|after|below|until) 1\.0\b`), "semantic versioning's first stable version, the rule docs/versioning.md states"},
	{"", regexp.MustCompile(`\bPID 1\b`), "the first process of a PID namespace (Linux)"},
	{"", regexp.MustCompile(`\b\d+(\.\d+)? (MiB|KiB)\b|\b64 levels|\b65 are|\b1,048,576 bytes|\b200,000 YAML nodes|level 1, the action 2, its arguments 3`), "a limit: TestLimitsInDocs holds the exported ones to their Go constants (the YAML node budget, 64 levels of YAML and the stderr cap are unexported constants of scenarios and internal/implproc)"},
	{"", regexp.MustCompile(`\b(10|2|0\.5) s\b|\b10 min\b|\b10 seconds\b`), "a default timeout: TestLimitsInDocs holds run's to its flag defaults; the kill wait, the output grace and the in-process cap are unexported"},
	{"", regexp.MustCompile(`\b(either cap below|a cap below|cap of|budgets of|caps? of) 1\b|\btotal cap \+ 1\b`), "the budget minimum, 0004.D1.min"},
	{"", regexp.MustCompile(`\b1-based\b|\b0-based\b|always 0\b|` + "`" + `?0` + "`" + `? (differences|skips)|as 0\b|count it as 0|\b0 on this|\b0 \(`), "an index base or a zero that means none"},
	{"", regexp.MustCompile(`\b(on|with|of) 2 cores\b|\b2-core\b|\(2 cores\)`), "the machine a measurement names"},
	{"", regexp.MustCompile(`\b16 hex digits\b|from 2 to 9\b`), "a protocol constant (docs/protocol.schema.json, internal/protocol)"},
	{"", regexp.MustCompile(`\b200 (generated )?cases\b|instead of 200\b|\b(first|the first) 3 differences\b`), "the generated batch's defaults: TestGenerateDefaultsInDocs holds them to run's flags"},
	{"", regexp.MustCompile(`\bstages? \d\b`), "a stage of docs/implementing.md's table"},
	{"", regexp.MustCompile(`empty and\s+0\b`), "zero, the value the runner fills in"},
	{"docs/architecture.md", regexp.MustCompile(`^\| \d+ \|`), "a layer number (TestArchitecture)"},
	{"docs/implementing.md", regexp.MustCompile(`^\| \d \|`), "a stage number"},
	{"docs/migrating.md", regexp.MustCompile(`max_turns \d+/\d+/\d+|extractor \d+/\d+/\d+|turns \(4\)|Q3|\b(4|16)-step\b|16 refused calls|with 0 effective`), "GovDoc's recorded configuration, quoted from its repository (docs/migrating.md's table cites the file)"},
	{"docs/generate.md", regexp.MustCompile(`\| [a-z ]+ \| .*\|$`), "the generator's weights table (internal/generate; to become a generated block)"},
	{"docs/versioning.md", regexp.MustCompile(`^\| .*\|$`), "the bump rule's table: semantic versioning's positions (x.y.z), which internal/suiteversion applies"},
	{"docs/generate.md", regexp.MustCompile(`\b32 verbs × 32 nouns|16 × 16`), "the generator's vocabulary sizes (internal/generate)"},
	{"docs/generate.md", regexp.MustCompile(`over 200 bytes`), "the shrinker's cut (internal/generate)"},
	{"docs/scenario-format.md", regexp.MustCompile(`step: \[\{index|steps\[0\]`), "a field path's index"},
	{"docs/protocol.md", regexp.MustCompile(`\(a missing handler, a mismatched registry, a cap below 1,`), "the budget minimum, 0004.D1.min"},
}

// owned lists the sections whose figures another change is rewriting,
// exempt until it lands (none today: every section passes like the rest).
var owned = []struct{ file, heading, reason string }{}

var (
	dateRe    = regexp.MustCompile(`\b20\d\d-\d\d-\d\d\b`)
	machineRe = regexp.MustCompile(`\b\d+ cores\b|\b\d+-core\b`)
	numberRe  = regexp.MustCompile(`\d+(?:[.,]\d+)*`)
	// Text that holds digits but no figure.
	notFigures = []*regexp.Regexp{
		regexp.MustCompile("`[^`]*`"),
		regexp.MustCompile(`<!--.*?-->`),
		regexp.MustCompile(`\]\([^)]*\)`),
		dateRe,
		regexp.MustCompile(`\b\d{4}\.D\d+(\.[a-z][a-z0-9-]*)*`),
		regexp.MustCompile(`\b\d{4}-[a-z][a-z0-9-]*\.md\b`),
		regexp.MustCompile(`\bv?\d+\.\d+\.\d+\b`),
		regexp.MustCompile(`\b(?:[0-9a-f]*[a-f][0-9a-f]*[0-9][0-9a-f]*|[0-9a-f]*[0-9][0-9a-f]*[a-f][0-9a-f]*)\b`),
		regexp.MustCompile(`\bissues? \d+(?:[–-]\d+)?(?:, item \d+)?|\bitems? \d+(?:[–-]\d+)?`),
		regexp.MustCompile(`[A-Za-z_]+\d[A-Za-z0-9_]*|\d+[A-Za-z_][A-Za-z0-9_]*`), // identifiers: step2, scan_page_v3, 3×
	}
)

// A figure is one number in prose, where it was found.
type figure struct {
	file string
	line int
	num  string
	text string
}

// proseFigures lists the numbers of a page's prose: outside code blocks,
// generated blocks, inline code, comments and link targets, and not
// dates, decision IDs, versions, commits or issue numbers.
func proseFigures(file string, data []byte) []figure {
	var out []figure
	lines := strings.Split(string(data), "\n")
	fence, gen, section := false, false, ""
	// paragraphs: each line's paragraph text, for the dated-measurement rule.
	para := make([]string, len(lines))
	start := 0
	for i := 0; i <= len(lines); i++ {
		// A blank line ends a paragraph, unless a table follows it: a
		// table belongs to the sentence that introduces it.
		tableNext := i+1 < len(lines) && strings.HasPrefix(lines[i+1], "|")
		if i == len(lines) || (strings.TrimSpace(lines[i]) == "" && !tableNext) || strings.HasPrefix(lines[i], "#") {
			p := strings.Join(lines[start:i], "\n")
			for j := start; j < i; j++ {
				para[j] = p
			}
			start = i + 1
		}
	}
	// sectionDated: the heading above names a date and the section its machine.
	dated := map[string]bool{}
	cur := ""
	for _, l := range lines {
		if strings.HasPrefix(l, "#") {
			cur = l
		}
		if cur != "" && dateRe.MatchString(cur) && machineRe.MatchString(l) {
			dated[cur] = true
		}
	}
	for i, l := range lines {
		switch {
		case strings.HasPrefix(strings.TrimSpace(l), "```"):
			fence = !fence
			continue
		case fence, strings.HasPrefix(l, "    ") && !strings.HasPrefix(strings.TrimSpace(l), "-") && !strings.HasPrefix(strings.TrimSpace(l), "|"):
			continue
		case strings.HasPrefix(l, "<!-- generated:"):
			gen = true
			continue
		case l == docgen.EndMarker:
			gen = false
			continue
		case gen:
			continue
		}
		if strings.HasPrefix(l, "#") {
			section = l
		}
		if exempt(file, section) || dated[section] || (dateRe.MatchString(para[i]) && machineRe.MatchString(para[i])) {
			continue
		}
		s := l
		for _, re := range notFigures {
			s = re.ReplaceAllStringFunc(s, blank)
		}
		for _, a := range handWritten {
			if a.file == "" || a.file == file {
				s = a.pattern.ReplaceAllStringFunc(s, blank)
			}
		}
		for _, m := range numberRe.FindAllStringIndex(s, -1) {
			out = append(out, figure{file, i + 1, l[m[0]:m[1]], l})
		}
	}
	return out
}

// blank keeps a match's length, so positions still point into the line.
func blank(s string) string { return strings.Repeat(" ", len(s)) }

func exempt(file, section string) bool {
	for _, o := range owned {
		if o.file == file && (o.heading == section || o.heading == "*") {
			return true
		}
	}
	return false
}

// TestNoHandWrittenFigures lists every number in the prose of docs/*.md
// and README.md and fails on each that is neither in a generated block,
// nor of a kind handWritten allows with its reason, nor in a measurement
// that names its date and machine.
func TestNoHandWrittenFigures(t *testing.T) {
	pages, err := docgen.Documents("..")
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, page := range pages {
		data, err := os.ReadFile(filepath.Join("..", page))
		if err != nil {
			t.Fatal(err)
		}
		seen++
		for _, f := range proseFigures(page, data) {
			t.Errorf("%s:%d: %q is written by hand: put it in a generated block (<!-- generated: NAME -->, internal/docgen; %s), give the measurement its date and machine, reword the sentence without it, or add its kind to handWritten in docs/numbers_test.go with a reason\n\t%s", f.file, f.line, f.num, docgen.Command, strings.TrimSpace(f.text))
		}
	}
	if seen < 5 {
		t.Fatalf("read %d pages; the page list is stale", seen)
	}
}

// TestProseFigures: the scanner finds a count in prose and leaves what is
// not a figure.
func TestProseFigures(t *testing.T) {
	page := "# Title 1\n\nThe suite has 134 scenarios and 0002.D4.\n\n```\nrun 99\n```\n\n" +
		"<!-- generated: suite-size -->\n160 scenarios\n<!-- end generated -->\n" +
		"Measured on 2026-12-04 on 2 cores: 8.5 s.\n\nsee `--seed 7` and step2, commit 574531b.\n"
	got := proseFigures("x.md", []byte(page))
	if len(got) != 1 || got[0].num != "134" || got[0].line != 3 {
		t.Fatalf("got %+v, want the one figure 134 on line 3", got)
	}
}
