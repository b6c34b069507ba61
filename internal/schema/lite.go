package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/polyloop/polyloop-conform/internal/jsontext"
)

// Lite validates instances against a schema written in the small subset
// of JSON Schema the suite's own schemas use (type, const, enum, minimum,
// minLength, pattern, properties, required, additionalProperties: false,
// items, $ref into $defs, oneOf), with a walk that allocates only for its
// problems. CompileLite refuses a schema with any other keyword, so a
// schema that grows past the subset fails loudly instead of being checked
// less. The general validator (Compile) stays the reference: tests feed
// both the same corpus and require the same verdicts.
type Lite struct {
	root *liteNode
	defs map[string]*liteNode
}

type liteNode struct {
	types      []string
	constant   any
	hasConst   bool
	enum       []any
	minimum    *big.Rat
	minLength  int
	pattern    *ecmaRegexp
	properties map[string]*liteNode
	required   []string
	closed     bool // additionalProperties: false
	items      *liteNode
	ref        string
	oneOf      []*liteNode
}

// Keywords that say nothing about validity.
var liteAnnotations = []string{"description", "x-compare", "title", "$schema", "$id", "$defs"}

// CompileLite compiles a schema document for Lite validation.
func CompileLite(name string, doc []byte) (*Lite, error) {
	var raw map[string]any
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	l := &Lite{defs: map[string]*liteNode{}}
	if defs, ok := raw["$defs"].(map[string]any); ok {
		for k, v := range defs {
			n, err := compileNode(name, "/$defs/"+k, v)
			if err != nil {
				return nil, err
			}
			l.defs[k] = n
		}
	}
	root, err := compileNode(name, "", raw)
	if err != nil {
		return nil, err
	}
	l.root = root
	// Every $ref must name a definition: one that does not is a schema
	// that does not compile, as the general validator says, not a nil
	// node met while validating.
	var missing error
	walkNodes(root, func(n *liteNode) {
		if n.ref != "" && l.defs[n.ref] == nil && missing == nil {
			missing = fmt.Errorf("%s: $ref #/$defs/%s does not resolve", name, n.ref)
		}
	})
	for _, k := range slices.Sorted(maps.Keys(l.defs)) {
		walkNodes(l.defs[k], func(n *liteNode) {
			if n.ref != "" && l.defs[n.ref] == nil && missing == nil {
				missing = fmt.Errorf("%s: $ref #/$defs/%s does not resolve", name, n.ref)
			}
		})
	}
	if missing != nil {
		return nil, missing
	}
	return l, nil
}

// walkNodes calls f on n and every node below it.
func walkNodes(n *liteNode, f func(*liteNode)) {
	if n == nil {
		return
	}
	f(n)
	for _, p := range n.properties {
		walkNodes(p, f)
	}
	walkNodes(n.items, f)
	for _, c := range n.oneOf {
		walkNodes(c, f)
	}
}

func compileNode(name, at string, v any) (*liteNode, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s%s: a schema must be an object", name, at)
	}
	n := &liteNode{}
	for k, val := range m {
		var err error
		switch k {
		case "type":
			switch t := val.(type) {
			case string:
				n.types = []string{t}
			case []any:
				for _, x := range t {
					n.types = append(n.types, x.(string))
				}
			}
		case "const":
			n.constant, n.hasConst = val, true
		case "enum":
			n.enum = val.([]any)
		case "minimum":
			r, ok := new(big.Rat).SetString(val.(json.Number).String())
			if !ok {
				return nil, fmt.Errorf("%s%s/minimum: not a number", name, at)
			}
			n.minimum = r
		case "minLength":
			// A whole number however written: 2.0 is 2 (0006.D6.integer).
			num, _ := val.(json.Number)
			r, ok := new(big.Rat).SetString(num.String())
			if !ok || !r.IsInt() || r.Sign() < 0 || !r.Num().IsInt64() {
				return nil, fmt.Errorf("%s%s/minLength: not a non-negative integer", name, at)
			}
			n.minLength = int(r.Num().Int64())
		case "pattern":
			var re ecmaRegexp
			if re, err = compileECMA(val.(string)); err == nil {
				n.pattern = &re
			}
		case "properties":
			n.properties = map[string]*liteNode{}
			for p, sub := range val.(map[string]any) {
				if n.properties[p], err = compileNode(name, at+"/properties/"+p, sub); err != nil {
					return nil, err
				}
			}
		case "required":
			for _, r := range val.([]any) {
				n.required = append(n.required, r.(string))
			}
		case "additionalProperties":
			if b, ok := val.(bool); !ok || b {
				return nil, fmt.Errorf("%s%s: Lite supports additionalProperties: false only", name, at)
			}
			n.closed = true
		case "items":
			n.items, err = compileNode(name, at+"/items", val)
		case "$ref":
			ref := val.(string)
			if !strings.HasPrefix(ref, "#/$defs/") {
				return nil, fmt.Errorf("%s%s: Lite supports $ref into #/$defs only, got %s", name, at, ref)
			}
			n.ref = strings.TrimPrefix(ref, "#/$defs/")
		case "oneOf":
			for i, sub := range val.([]any) {
				c, err := compileNode(name, fmt.Sprintf("%s/oneOf/%d", at, i), sub)
				if err != nil {
					return nil, err
				}
				n.oneOf = append(n.oneOf, c)
			}
		default:
			if !slices.Contains(liteAnnotations, k) {
				return nil, fmt.Errorf("%s%s: keyword %q is outside the subset Lite validates; use Compile", name, at, k)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("%s%s/%s: %w", name, at, k, err)
		}
	}
	return n, nil
}

// Validate reports every problem of instance (decoded with UseNumber).
func (l *Lite) Validate(instance any) []Problem {
	var out []Problem
	var at path
	l.check(l.root, instance, &at, &out)
	return out
}

// seg is one step of the path to a value.
type seg struct {
	key   string
	index int
	isKey bool
}

// path is the way to the value being checked, one stack for the whole
// walk (pushed on the way down, popped on the way up), so that no step
// is allocated and a pointer string is built only for a problem.
type path []seg

func (p *path) push(s seg) { *p = append(*p, s) }
func (p *path) pop()       { *p = (*p)[:len(*p)-1] }

func (p *path) pointer() string {
	tokens := make([]string, len(*p))
	for i, s := range *p {
		tokens[i] = strconv.Itoa(s.index)
		if s.isKey {
			tokens[i] = s.key
		}
	}
	return jsontext.Pointer(tokens)
}

func problem(out *[]Problem, at *path, format string, args ...any) {
	*out = append(*out, Problem{Pointer: at.pointer(), Message: fmt.Sprintf(format, args...)})
}

func jsonType(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number:
		if _, err := x.Int64(); err == nil {
			return "integer"
		}
		if r, ok := new(big.Rat).SetString(x.String()); ok && r.IsInt() {
			return "integer"
		}
		return "number"
	case float64:
		if x == float64(int64(x)) {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

func (l *Lite) check(n *liteNode, v any, at *path, out *[]Problem) {
	add := func(format string, args ...any) { problem(out, at, format, args...) }
	if n.ref != "" {
		l.check(l.defs[n.ref], v, at, out)
	}
	if len(n.oneOf) > 0 {
		matched := 0
		for _, c := range n.oneOf {
			var probs []Problem
			l.check(c, v, at, &probs)
			if len(probs) == 0 {
				matched++
			}
		}
		if matched != 1 {
			add("oneOf failed: %d of %d subschemas matched", matched, len(n.oneOf))
		}
	}
	t := jsonType(v)
	if len(n.types) > 0 {
		ok := slices.Contains(n.types, t) || (t == "integer" && slices.Contains(n.types, "number"))
		if !ok {
			add("got %s, want %s", t, strings.Join(n.types, " or "))
			return
		}
	}
	if n.hasConst && !equalJSON(v, n.constant) {
		add("value must be %v", n.constant)
	}
	if n.enum != nil {
		found := false
		for _, e := range n.enum {
			found = found || equalJSON(v, e)
		}
		if !found {
			add("value must be one of %v", n.enum)
		}
	}
	switch x := v.(type) {
	case json.Number:
		if n.minimum != nil {
			if i, err := x.Int64(); err == nil && n.minimum.IsInt() && n.minimum.Num().IsInt64() {
				// The common case, an integer against an integer bound,
				// without a rational per number.
				if i < n.minimum.Num().Int64() {
					add("minimum: got %s, want %s", x, n.minimum.RatString())
				}
			} else if r, ok := new(big.Rat).SetString(x.String()); ok && r.Cmp(n.minimum) < 0 {
				add("minimum: got %s, want %s", x, n.minimum.RatString())
			}
		}
	case string:
		if n.minLength > 0 && utf8.RuneCountInString(x) < n.minLength {
			add("minLength: got %d, want %d", utf8.RuneCountInString(x), n.minLength)
		}
		if n.pattern != nil && !n.pattern.MatchString(x) {
			add("'%s' does not match pattern '%s'", x, n.pattern)
		}
	case []any:
		if n.items != nil {
			for i, e := range x {
				at.push(seg{index: i})
				l.check(n.items, e, at, out)
				at.pop()
			}
		}
	case map[string]any:
		var missing []string
		for _, r := range n.required {
			if _, ok := x[r]; !ok {
				missing = append(missing, r)
			}
		}
		switch len(missing) {
		case 0:
		case 1:
			add("missing property '%s'", missing[0])
		default:
			add("missing properties %s", "'"+strings.Join(missing, "', '")+"'")
		}
		var extra []string
		for k, e := range x {
			sub, ok := n.properties[k]
			if !ok {
				if n.closed {
					extra = append(extra, k)
				}
				continue
			}
			at.push(seg{key: k, isKey: true})
			l.check(sub, e, at, out)
			at.pop()
		}
		if len(extra) > 0 {
			sort.Strings(extra)
			add("additional properties %s not allowed", "'"+strings.Join(extra, "', '")+"'")
		}
	}
}

// equalJSON compares two decoded JSON values, numbers by value.
func equalJSON(a, b any) bool {
	an, aok := a.(json.Number)
	bn, bok := b.(json.Number)
	if aok && bok {
		ar, ok1 := new(big.Rat).SetString(an.String())
		br, ok2 := new(big.Rat).SetString(bn.String())
		return ok1 && ok2 && ar.Cmp(br) == 0
	}
	if aok != bok {
		return false
	}
	switch x := a.(type) {
	case string, bool, nil:
		return a == b
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
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			if !equalJSON(v, y[k]) {
				return false
			}
		}
		return true
	}
	return false
}
