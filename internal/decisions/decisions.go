// Package decisions reads the machine-readable decision records in
// docs/design (format described in docs/design/README.md) and checks
// scenarios against them.
package decisions

import (
	"fmt"
	"io/fs"
	"regexp"
	"sort"
	"strings"

	"github.com/polyloop/polyloop-conform/internal/markdown"
)

// Decision is one decision record.
type Decision struct {
	ID             string
	Title          string
	Level          string // MUST or SHOULD
	Status         string // accepted or superseded
	SupersededBy   string
	Upstream       string // e.g. "0008 决策四"; several are separated by ", "
	Interpretation bool
	// Reviewed is the record's `- reviewed:` line: a note that the
	// scenarios citing it were reviewed against its current text. The gate
	// asks for a new one when a MUST decision's text changes and none of
	// its scenarios or goldens do.
	Reviewed string
	File     string
	Line     int
	// Text is the record's body, heading included, up to the next decision
	// heading; the gate compares it between revisions.
	Text string
}

// Accepted reports whether the decision is in force.
func (d Decision) Accepted() bool { return d.Status == "accepted" }

var (
	headingRe = regexp.MustCompile(`^#{2,4} ([0-9]{4}\.D[0-9]+(?:\.[a-z0-9-]+)*) — (.+)$`)
	looksLike = regexp.MustCompile(`^#{2,4} [0-9]{4}\.D`)
	metaRe    = regexp.MustCompile(`^- (level|status|upstream|interpretation|reviewed): (.*)$`)
)

// Parse reads one design record file. A record runs from its heading to
// the next heading other than a level-5 one.
func Parse(name string, data []byte) ([]Decision, error) {
	if err := checkHeadings(name, data); err != nil {
		return nil, err
	}
	secs, err := markdown.Sections(data, headingRe, func(line string) bool {
		return strings.HasPrefix(line, "#") && !strings.HasPrefix(line, "#####")
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	out := make([]Decision, 0, len(secs))
	for _, sec := range secs {
		d := Decision{ID: sec.Match[1], Title: sec.Match[2], File: name, Line: sec.Line}
		// The metadata lines stand right under the heading.
		for i, line := range sec.Lines[1:] {
			m := metaRe.FindStringSubmatch(line)
			if m == nil {
				break
			}
			if err := setMeta(&d, m[1], strings.TrimSpace(m[2])); err != nil {
				return nil, fmt.Errorf("%s:%d: %s: %w", name, sec.Line+1+i, d.ID, err)
			}
		}
		d.Text = strings.TrimSpace(strings.Join(sec.Lines, "\n"))
		if d.Level == "" || d.Status == "" {
			return nil, fmt.Errorf("%s:%d: %s needs `- level: MUST|SHOULD` and `- status: accepted|superseded-by ID` right under its heading", name, d.Line, d.ID)
		}
		out = append(out, d)
	}
	return out, nil
}

// checkHeadings refuses a heading that looks like a decision's but is not
// spelled as one.
func checkHeadings(name string, data []byte) error {
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSuffix(line, "\r")
		if looksLike.MatchString(line) && !headingRe.MatchString(line) {
			return fmt.Errorf("%s:%d: heading looks like a decision but is not `### NNNN.Dk[.refinement] — Title` (em dash, lower-case refinements)", name, i+1)
		}
	}
	return nil
}

func setMeta(d *Decision, key, val string) error {
	switch key {
	case "level":
		if val != "MUST" && val != "SHOULD" {
			return fmt.Errorf("level %q is neither MUST nor SHOULD", val)
		}
		d.Level = val
	case "status":
		switch {
		case val == "accepted":
			d.Status = val
		case strings.HasPrefix(val, "superseded-by "):
			d.Status = "superseded"
			d.SupersededBy = strings.TrimSpace(strings.TrimPrefix(val, "superseded-by "))
		default:
			return fmt.Errorf("status %q is neither accepted nor superseded-by ID", val)
		}
	case "upstream":
		d.Upstream = val
	case "reviewed":
		if val == "" {
			return fmt.Errorf("reviewed: say what was reviewed and when, e.g. `- reviewed: 2026-12-03, scenarios still check the new text`")
		}
		d.Reviewed = val
	case "interpretation":
		if val != "reference" {
			return fmt.Errorf("interpretation %q: the only kind is reference", val)
		}
		d.Interpretation = true
	}
	return nil
}

// Set is every decision of a design folder, by ID.
type Set struct {
	ByID  map[string]Decision
	Order []string
}

// Load reads every *.md of fsys except README.md and refuses duplicate IDs.
func Load(fsys fs.FS) (*Set, error) {
	names, err := fs.Glob(fsys, "*.md")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	s := &Set{ByID: map[string]Decision{}}
	for _, n := range names {
		if n == "README.md" {
			continue
		}
		data, err := fs.ReadFile(fsys, n)
		if err != nil {
			return nil, err
		}
		ds, err := Parse(n, data)
		if err != nil {
			return nil, err
		}
		for _, d := range ds {
			if prev, dup := s.ByID[d.ID]; dup {
				return nil, fmt.Errorf("%s:%d: %s is already defined at %s:%d", n, d.Line, d.ID, prev.File, prev.Line)
			}
			s.ByID[d.ID] = d
			s.Order = append(s.Order, d.ID)
		}
	}
	for _, id := range s.Order {
		d := s.ByID[id]
		if d.SupersededBy != "" {
			if _, ok := s.ByID[d.SupersededBy]; !ok {
				return nil, fmt.Errorf("%s:%d: %s is superseded by %s, which is not defined", d.File, d.Line, id, d.SupersededBy)
			}
		}
	}
	return s, nil
}

// Upstreams lists the upstream decisions the record restates ("0008
// 决策四", "govdoc 需求七"); a record may restate several.
func (d Decision) Upstreams() []string {
	var out []string
	for _, u := range strings.Split(d.Upstream, ",") {
		if u = strings.TrimSpace(u); u != "" {
			out = append(out, u)
		}
	}
	return out
}

// Body is the record's prose: its text without the heading and the
// metadata lines (level, status, upstream, interpretation).
func (d Decision) Body() string {
	var out []string
	for i, line := range strings.Split(d.Text, "\n") {
		if i == 0 || metaRe.MatchString(line) {
			continue
		}
		out = append(out, line)
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}
