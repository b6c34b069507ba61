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
)

// Difference is one field that differs.
type Difference struct {
	Path string `json:"path"`
	Want any    `json:"want"`
	Got  any    `json:"got"`
	// WantMissing and GotMissing tell an absent field from a null one.
	WantMissing bool `json:"want_missing,omitempty"`
	GotMissing  bool `json:"got_missing,omitempty"`
}

func (d Difference) String() string {
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

func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// Options adjust a comparison.
type Options struct {
	// Ignore lists path patterns to leave out; "[*]" matches any position
	// and a trailing ".*" matches everything below a path.
	Ignore []string
}

// Diff compares want and got and returns every difference, sorted by
// path. Both must be plain JSON values as encoding/json decodes them with
// UseNumber (trajectories.Parse and ToGeneric return that form); pass other
// Go values through Normalize first.
func Diff(want, got any, o Options) ([]Difference, error) {
	ignore, err := compilePatterns(o.Ignore)
	if err != nil {
		return nil, err
	}
	r := &reporter{}
	opts := []cmp.Option{cmp.Reporter(r)}
	if len(ignore) > 0 {
		opts = append(opts, cmp.FilterPath(func(p cmp.Path) bool { return matchAny(ignore, pathString(p)) }, cmp.Ignore()))
	}
	cmp.Equal(want, got, opts...)
	sort.SliceStable(r.diffs, func(i, j int) bool { return lessPath(r.diffs[i].Path, r.diffs[j].Path) })
	return r.diffs, nil
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
	path  cmp.Path
	diffs []Difference
}

func (r *reporter) PushStep(s cmp.PathStep) { r.path = append(r.path, s) }
func (r *reporter) PopStep()                { r.path = r.path[:len(r.path)-1] }

func (r *reporter) Report(res cmp.Result) {
	if res.Equal() {
		return
	}
	vx, vy := r.path.Last().Values()
	d := Difference{Path: pathString(r.path)}
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
	r.diffs = append(r.diffs, d)
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
				if b.Len() > 0 {
					b.WriteByte('.')
				}
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
