// Package compare diffs two trajectories field by field with go-cmp and
// reports each difference as a path, a wanted value and a got value.
//
// Trajectories are compared as plain JSON values (maps, slices, strings,
// json.Number, bools, nil), so a field a downstream added, dropped or
// renamed shows up as a difference rather than vanishing during decoding.
// Paths are written steps[2].outcome.status with 0-based array positions,
// the same syntax expectations and ignore lists use. The text form of a
// difference is for people and may change; tools should use the JSON form.
package compare

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/google/go-cmp/cmp"
	"github.com/polyloop/polyloop-conform/internal/jsontext"
)

// Difference is one field that differs.
type Difference struct {
	Path string `json:"path"`
	Want any    `json:"want"`
	Got  any    `json:"got"`
	// WantMissing and GotMissing tell an absent field from a null one.
	WantMissing bool `json:"want_missing,omitempty"`
	GotMissing  bool `json:"got_missing,omitempty"`
	// Class is the compared field's class when Options.Class was given.
	Class Class `json:"class"`
	// Rule, for a Text field, is the text rule the got value breaks; Want
	// is then the reference's wording, shown for orientation only.
	Rule string `json:"rule,omitempty"`
	// Wording marks a Text field that differs word for word (the strict
	// profile) and keeps the text rule: only the words differ, which the
	// default profile accepts.
	Wording bool `json:"wording,omitempty"`
}

func (d Difference) String() string {
	if d.Rule != "" {
		return fmt.Sprintf("%s: %s", d.displayPath(), d.Rule)
	}
	return fmt.Sprintf("%s: want %s, got %s", d.displayPath(), render(d.Want, d.WantMissing), render(d.Got, d.GotMissing))
}

func (d Difference) displayPath() string {
	if d.Path == "" {
		return "(whole trajectory)"
	}
	return d.Path
}

// Render shows a value the way differences print it: strings bare when
// short and simple, everything else as compact JSON.
func Render(v any) string { return render(v, false) }

func render(v any, missing bool) string {
	if missing {
		return "(absent)"
	}
	if s, ok := v.(string); ok && len(s) <= 80 && !strings.ContainsAny(s, "\n\" ") && s != "" {
		return s
	}
	b, err := marshal(v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	if len(b) > 400 {
		return string(b[:400]) + "…"
	}
	return string(b)
}

func marshal(v any) ([]byte, error) { return jsontext.Marshal(v) }

// Options adjust a comparison.
type Options struct {
	// Ignore lists path patterns to leave out; "[*]" matches any position
	// and a trailing ".*" matches everything below a path.
	Ignore []string
	// Class gives the class of the value at a path (as Difference.Path
	// writes it). Values of class Text are checked with TextRule instead
	// of equality; nil compares every value exactly and labels every
	// difference Normative.
	Class func(path string) Class
	// TextEqual, when set with Class, compares values of class Text word
	// for word with it as well as by TextRule: the strict profile (with
	// Verbatim), which still labels each difference with its class and
	// marks those that are wording only, so a report can tell a
	// difference of wording from one of behaviour.
	TextEqual func(want, got any) bool
}

// Diff compares want and got and returns every difference, sorted by
// path. Both must be plain JSON values as encoding/json decodes them with
// UseNumber (trajectories.Parse and ToGeneric return that form); pass other
// Go values through Normalize first.
//
// Objects and equal-length arrays are walked directly, in one linear pass;
// arrays whose lengths differ are handed to go-cmp, whose edit script tells
// an inserted or dropped element from a changed one.
func Diff(want, got any, o Options) ([]Difference, error) {
	ignore, err := compilePatterns(o.Ignore)
	if err != nil {
		return nil, err
	}
	d := &differ{ignore: ignore, class: o.Class, textEqual: o.TextEqual}
	d.walk(want, got)
	sort.SliceStable(d.diffs, func(i, j int) bool { return lessPath(d.diffs[i].Path, d.diffs[j].Path) })
	return d.diffs, nil
}

type differ struct {
	ignore    []*regexp.Regexp
	class     func(string) Class
	textEqual func(want, got any) bool
	diffs     []Difference
	path      []segment // the current path, rendered only when needed
}

type segment struct {
	key   string
	index int // -1 for a key
}

func (d *differ) render() string {
	var b strings.Builder
	for _, s := range d.path {
		if s.index >= 0 {
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(s.index))
			b.WriteByte(']')
			continue
		}
		if isIdent(s.key) {
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s.key)
		} else {
			b.WriteString("[" + strconv.Quote(s.key) + "]")
		}
	}
	return b.String()
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (i > 0 && c >= '0' && c <= '9') {
			continue
		}
		return false
	}
	return true
}

func (d *differ) ignored() bool { return len(d.ignore) > 0 && matchAny(d.ignore, d.render()) }

func (d *differ) add(diff Difference) {
	if d.ignored() {
		return
	}
	diff.Path = d.render()
	if d.class != nil {
		diff.Class = d.class(diff.Path)
	}
	d.diffs = append(d.diffs, diff)
}

// leaf records a and b as different unless the path's class is Text and b
// keeps the text rule. Presence is always normative: an absent value is
// reported by the caller before it gets here.
func (d *differ) leaf(a, b any) {
	if d.ignored() {
		return
	}
	path := d.render()
	diff := Difference{Path: path, Want: a, Got: b}
	if d.class != nil {
		diff.Class = d.class(path)
		if diff.Class == Text && textAccepted(&diff, d.textEqual) {
			return
		}
	}
	d.diffs = append(d.diffs, diff)
}

func (d *differ) walk(a, b any) {
	if d.ignored() {
		return
	}
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			break
		}
		for k, va := range x {
			d.path = append(d.path, segment{key: k, index: -1})
			if vb, inB := y[k]; inB {
				d.walk(va, vb)
			} else {
				d.add(Difference{Want: va, GotMissing: true})
			}
			d.path = d.path[:len(d.path)-1]
		}
		for k, vb := range y {
			if _, inA := x[k]; !inA {
				d.path = append(d.path, segment{key: k, index: -1})
				d.add(Difference{WantMissing: true, Got: vb})
				d.path = d.path[:len(d.path)-1]
			}
		}
		return
	case []any:
		y, ok := b.([]any)
		if !ok {
			break
		}
		if len(x) == len(y) {
			for i := range x {
				d.path = append(d.path, segment{index: i})
				d.walk(x[i], y[i])
				d.path = d.path[:len(d.path)-1]
			}
			return
		}
		d.align(d.render(), x, y)
		return
	}
	if !equalJSON(a, b) {
		d.leaf(a, b)
	}
}

// align lets go-cmp match up arrays of different lengths.
func (d *differ) align(path string, x, y []any) {
	r := &reporter{prefix: path, class: d.class, textEqual: d.textEqual}
	opts := []cmp.Option{cmp.Reporter(r), cmp.FilterValues(equalJSON, cmp.Ignore())}
	if len(d.ignore) > 0 {
		opts = append(opts, cmp.FilterPath(func(p cmp.Path) bool { return matchAny(d.ignore, path+pathString(p)) }, cmp.Ignore()))
	}
	cmp.Equal(x, y, opts...)
	d.diffs = append(d.diffs, r.diffs...)
}

// Normalize re-reads a value through encoding/json so that Go values of
// different types but equal JSON compare equal.
func Normalize(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		return v
	}
	return out
}

type reporter struct {
	prefix    string
	class     func(string) Class
	textEqual func(want, got any) bool
	path      cmp.Path
	diffs     []Difference
}

func (r *reporter) PushStep(s cmp.PathStep) { r.path = append(r.path, s) }
func (r *reporter) PopStep()                { r.path = r.path[:len(r.path)-1] }

func (r *reporter) Report(res cmp.Result) {
	if res.Equal() {
		return
	}
	vx, vy := r.path.Last().Values()
	d := Difference{Path: r.prefix + pathString(r.path)}
	if vx.IsValid() {
		d.Want = vx.Interface()
	} else {
		d.WantMissing = true
	}
	if vy.IsValid() {
		d.Got = vy.Interface()
	} else {
		d.GotMissing = true
	}
	if r.class != nil {
		d.Class = r.class(d.Path)
		if d.Class == Text && !d.WantMissing && !d.GotMissing && textAccepted(&d, r.textEqual) {
			return
		}
	}
	r.diffs = append(r.diffs, d)
}

// textAccepted applies the text comparison to a difference of class Text
// whose both values are present: TextRule, whose broken rule it records on
// d, and word for word with equal when it is set, marking a difference of
// words alone as Wording.
func textAccepted(d *Difference, equal func(want, got any) bool) bool {
	d.Rule = TextRule(d.Want, d.Got)
	if equal == nil {
		return d.Rule == ""
	}
	if equal(d.Want, d.Got) {
		d.Rule = ""
		return true
	}
	d.Wording = d.Rule == ""
	return false
}

var ident = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// pathString renders a go-cmp path over JSON values as steps[2].outcome.status.
func pathString(p cmp.Path) string {
	var b strings.Builder
	for _, s := range p {
		switch s := s.(type) {
		case cmp.MapIndex:
			k := s.Key()
			key := fmt.Sprint(k.Interface())
			if k.Kind() == reflect.String && ident.MatchString(key) {
				b.WriteByte('.')
				b.WriteString(key)
			} else {
				fmt.Fprintf(&b, "[%s]", strconv.Quote(key))
			}
		case cmp.SliceIndex:
			ix, iy := s.SplitKeys()
			i := iy
			if i < 0 {
				i = ix
			}
			fmt.Fprintf(&b, "[%d]", i)
		}
	}
	return b.String()
}

// Matcher matches paths against ignore patterns, as Options.Ignore does.
type Matcher struct {
	pats []string
	res  []*regexp.Regexp
}

// NewMatcher compiles ignore patterns.
func NewMatcher(pats []string) (*Matcher, error) {
	res, err := compilePatterns(pats)
	if err != nil {
		return nil, err
	}
	var kept []string
	for _, p := range pats {
		if p = strings.TrimSpace(p); p != "" {
			kept = append(kept, p)
		}
	}
	return &Matcher{pats: kept, res: res}, nil
}

// Patterns returns the patterns, blank ones left out.
func (m *Matcher) Patterns() []string { return m.pats }

// Match returns the first pattern that matches path, if any.
func (m *Matcher) Match(path string) (string, bool) {
	for i, re := range m.res {
		if re.MatchString(path) {
			return m.pats[i], true
		}
	}
	return "", false
}

// Covers returns the pattern that matches path or one of its ancestors:
// ignoring "steps" ignores steps[0].outcome.status too.
func (m *Matcher) Covers(path string) (string, bool) {
	for p := path; p != ""; {
		if pat, ok := m.Match(p); ok {
			return pat, true
		}
		i := strings.LastIndexAny(p, ".[")
		if i <= 0 {
			break
		}
		p = p[:i]
	}
	return "", false
}

// Leaves returns the path of every leaf of doc (a scalar, or an empty
// object or array), written as Difference.Path writes paths.
func Leaves(doc any) []string {
	d := &differ{}
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if len(x) == 0 {
				out = append(out, d.render())
			}
			for k, c := range x {
				d.path = append(d.path, segment{key: k, index: -1})
				walk(c)
				d.path = d.path[:len(d.path)-1]
			}
		case []any:
			if len(x) == 0 {
				out = append(out, d.render())
			}
			for i, c := range x {
				d.path = append(d.path, segment{index: i})
				walk(c)
				d.path = d.path[:len(d.path)-1]
			}
		default:
			out = append(out, d.render())
		}
	}
	walk(doc)
	sort.Slice(out, func(i, j int) bool { return lessPath(out[i], out[j]) })
	return out
}

func compilePatterns(pats []string) ([]*regexp.Regexp, error) {
	var out []*regexp.Regexp
	for _, p := range pats {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		q := regexp.QuoteMeta(p)
		q = strings.ReplaceAll(q, `\[\*\]`, `\[\d+\]`)
		if strings.HasSuffix(q, `\.\*`) {
			q = strings.TrimSuffix(q, `\.\*`) + `(\..*|\[.*)?`
		}
		re, err := regexp.Compile("^" + q + "$")
		if err != nil {
			return nil, fmt.Errorf("ignore pattern %q: %w", p, err)
		}
		out = append(out, re)
	}
	return out, nil
}

func matchAny(res []*regexp.Regexp, s string) bool {
	for _, re := range res {
		if re.MatchString(s) {
			return true
		}
	}
	return false
}

// lessPath orders paths so that steps[2] sorts before steps[10].
func lessPath(a, b string) bool {
	return pathKey(a) < pathKey(b)
}

var digits = regexp.MustCompile(`\d+`)

func pathKey(p string) string {
	return digits.ReplaceAllStringFunc(p, func(d string) string { return fmt.Sprintf("%08s", d) })
}

// equalJSON reports whether two plain JSON values are equal.
func equalJSON(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !equalJSON(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equalJSON(x[i], y[i]) {
				return false
			}
		}
		return true
	case string:
		y, ok := b.(string)
		return ok && x == y
	case json.Number:
		y, ok := b.(json.Number)
		return ok && jsontext.SameNumber(x, y)
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case nil:
		return b == nil
	}
	return false
}
