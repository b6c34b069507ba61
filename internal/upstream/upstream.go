// Package upstream reads PolyLoop's own design documents (Chinese, with
// decisions under headings such as "## 决策一：…"), hashes each decision's
// normalised text, and keeps those hashes in a lock file next to the local
// decision IDs they map to, so that a change upstream reaches this suite's CI.
package upstream

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/polyloop/polyloop-conform/internal/atomicfile"
	"github.com/polyloop/polyloop-conform/internal/decisions"
	"github.com/polyloop/polyloop-conform/internal/markdown"
)

// Decision is one upstream decision.
type Decision struct {
	Doc     string // "0008"
	Heading string // "决策四"
	Title   string
	File    string
	Line    int
	Hash    string // sha256 of the normalised text
}

// Key is how local records name an upstream decision ("0008 决策四").
func (d Decision) Key() string { return d.Doc + " " + d.Heading }

var (
	headingRe = regexp.MustCompile(`^##\s+(决策[一二三四五六七八九十百零〇0-9]+)\s*[：:]\s*(.*)$`)
	docNumRe  = regexp.MustCompile(`(\d{4})`)
)

// ReadDir reads every *.md and *.txt file of dir as an upstream document.
// The document number is the first four-digit number in the file name.
func ReadDir(dir string) ([]Decision, error) {
	var files []string
	for _, pat := range []string{"*.md", "*.txt"} {
		m, err := filepath.Glob(filepath.Join(dir, pat))
		if err != nil {
			return nil, err
		}
		files = append(files, m...)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("upstream %s: no *.md or *.txt design documents found", dir)
	}
	sort.Strings(files)
	var out []Decision
	seen := map[string]string{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var ds []Decision
		num := docNumRe.FindString(filepath.Base(f))
		switch {
		case num != "":
			ds, err = Parse(filepath.Base(f), num, data)
		case bytes.Contains(data, []byte("\n"+requirementsHeading+"\n")):
			ds, err = ParseAlignment(filepath.Base(f), data)
		default:
			continue // not a design document (an index, a README)
		}
		if err != nil {
			return nil, err
		}
		for _, d := range ds {
			if prev, dup := seen[d.Key()]; dup {
				return nil, fmt.Errorf("%s:%d: %s appears again (first in %s)", d.File, d.Line, d.Key(), prev)
			}
			seen[d.Key()] = d.File
			out = append(out, d)
		}
	}
	return out, nil
}

// Parse splits one document into its decisions. A decision's text runs
// from its heading to the next "## " heading of any kind.
func Parse(name, doc string, data []byte) ([]Decision, error) {
	secs, err := markdown.Sections(data, headingRe, func(line string) bool { return strings.HasPrefix(line, "## ") })
	if err != nil {
		return nil, err
	}
	out := make([]Decision, 0, len(secs))
	for _, sec := range secs {
		out = append(out, Decision{Doc: doc, Heading: sec.Match[1], Title: short(sec.Match[2]), File: name, Line: sec.Line,
			Hash: Hash(strings.Join(sec.Lines, "\n"))})
	}
	return out, nil
}

// The downstream alignment document (GovDoc-SaaS) is not a numbered design
// doc: its requirements are paragraphs "一、…" to "九、…" under the line
// 需求条目, and it opens with the note that introduced design 0010. Both are
// pinned so that a change to them reaches the gate like a decision's.
const (
	// AlignmentDoc is the document key of the alignment's requirements
	// ("govdoc 需求七").
	AlignmentDoc        = "govdoc"
	requirementsHeading = "需求条目"
	// NoteHeading is the heading key of the 0010 note ("0010 说明").
	NoteHeading = "说明"
)

var requirementRe = regexp.MustCompile(`^([一二三四五六七八九十]+)、\s*(.*)$`)

// sectionLine reports whether a line of the alignment document starts a
// new section: short, and not the end of a sentence ("下面的缺口。" closes
// a requirement's paragraph; "已经有答案的（…）" opens a section).
func sectionLine(line string) bool {
	t := strings.TrimSpace(line)
	if t == "" || utf8.RuneCountInString(t) > 30 {
		return false
	}
	last, _ := utf8.DecodeLastRuneInString(t)
	return !strings.ContainsRune("。！？；：.!?;:", last)
}

// ParseAlignment reads the downstream alignment document: each numbered
// requirement (its text runs to the next requirement or the next section
// line) as "govdoc 需求N", and the 0010 note (the paragraph that opens
// with "0010 ", before the title) as "0010 说明".
func ParseAlignment(name string, data []byte) ([]Decision, error) {
	var out []Decision
	var cur *Decision
	var body []string
	flush := func() {
		if cur != nil {
			cur.Hash = Hash(strings.Join(body, "\n"))
			out = append(out, *cur)
		}
		cur, body = nil, nil
	}
	inRequirements := false
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 4<<20)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		t := strings.TrimSpace(line)
		switch {
		case !inRequirements && len(out) == 0 && cur == nil && strings.HasPrefix(t, "0010 "):
			cur = &Decision{Doc: "0010", Heading: NoteHeading, Title: short(t), File: name, Line: n}
			body = []string{line}
			flush()
		case t == requirementsHeading:
			flush()
			inRequirements = true
		case inRequirements && requirementRe.MatchString(t):
			flush()
			m := requirementRe.FindStringSubmatch(t)
			cur = &Decision{Doc: AlignmentDoc, Heading: "需求" + m[1], Title: short(m[2]), File: name, Line: n}
			body = []string{line}
		case inRequirements && sectionLine(t):
			flush()
			inRequirements = false
		case cur != nil:
			body = append(body, line)
		}
	}
	flush()
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: an alignment document with no numbered requirements under %s", name, requirementsHeading)
	}
	return out, nil
}

func short(title string) string {
	if r := []rune(title); len(r) > 40 {
		return string(r[:40]) + "…"
	}
	return title
}

// Hash normalises text (Unicode NFC, runs of white space folded to one
// space, and dropped next to CJK characters, where a line break never
// meant a space) so that re-wrapping a paragraph does not count as a
// change, and returns its SHA-256.
func Hash(text string) string {
	sum := sha256.Sum256([]byte(Normalize(text)))
	return hex.EncodeToString(sum[:])
}

// Normalize is the text Hash hashes.
func Normalize(text string) string {
	fields := strings.Fields(norm.NFC.String(text))
	var b strings.Builder
	for i, f := range fields {
		if i > 0 {
			prev, _ := utf8.DecodeLastRuneInString(fields[i-1])
			next, _ := utf8.DecodeRuneInString(f)
			if !cjk(prev) && !cjk(next) {
				b.WriteByte(' ')
			}
		}
		b.WriteString(f)
	}
	return b.String()
}

func cjk(r rune) bool {
	return unicode.Is(unicode.Han, r) || (r >= 0x3000 && r <= 0x303f) || (r >= 0xff00 && r <= 0xffef)
}

// LockFormat is the lock file's format tag.
const LockFormat = "polyloop-conform.upstream-lock/v1"

// Lock is docs/design/upstream.lock.json.
type Lock struct {
	Format    string      `json:"format"`
	Decisions []LockEntry `json:"decisions"`
}

// LockEntry pins one upstream decision.
type LockEntry struct {
	Doc     string   `json:"doc"`
	Heading string   `json:"heading"`
	Title   string   `json:"title"`
	SHA256  string   `json:"sha256"`
	Local   []string `json:"local"`
}

// Key is the entry's upstream key.
func (e LockEntry) Key() string { return e.Doc + " " + e.Heading }

// Pin builds a lock from upstream decisions and the local records that
// name them in their upstream: field. Unmapped lists upstream decisions no
// local record maps to.
func Pin(up []Decision, local *decisions.Set) (lock *Lock, unmapped []string) {
	byKey := map[string][]string{}
	for _, id := range local.Order {
		for _, u := range local.ByID[id].Upstreams() {
			byKey[u] = append(byKey[u], id)
		}
	}
	lock = &Lock{Format: LockFormat}
	for _, d := range up {
		ids := byKey[d.Key()]
		if ids == nil {
			ids = []string{}
			unmapped = append(unmapped, d.Key())
		}
		lock.Decisions = append(lock.Decisions, LockEntry{Doc: d.Doc, Heading: d.Heading, Title: d.Title, SHA256: d.Hash, Local: ids})
	}
	return lock, unmapped
}

// ReadLock reads a lock file.
func ReadLock(path string) (*Lock, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read upstream lock: %w (create it with 'polyloop-conform pin --upstream DIR')", err)
	}
	var l Lock
	if err := json.Unmarshal(data, &l); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if l.Format != LockFormat {
		return nil, fmt.Errorf("%s: format %q, want %q", path, l.Format, LockFormat)
	}
	return &l, nil
}

// WriteLock writes a lock file atomically.
func WriteLock(path string, l *Lock) error {
	data, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(path, append(data, '\n'))
}
