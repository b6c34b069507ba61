package tools

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/polyloop/polyloop-conform/reference/action"
)

// ToolRegistry is the one source of the tools a run can see: the schema the
// model is shown, the validation of calls, and dispatch all come from it
// (0006.D6). A registry is immutable once built.
type ToolRegistry struct {
	specs   []*ToolSpec
	byName  map[string]int
	schemas map[string]*jsonschema.Schema
}

// RegistryError is a construction or narrowing failure, with the tool names
// it concerns.
type RegistryError struct {
	Kind  string // duplicate_tool, invalid_schema, unknown_tool
	Tools []string
	Err   error
}

func (e *RegistryError) Error() string {
	switch e.Kind {
	case "duplicate_tool":
		return fmt.Sprintf("tool registry: tool name %s is registered more than once; give each ToolSpec a unique Name", quoteAll(e.Tools))
	case "unknown_tool":
		return fmt.Sprintf("tool registry: RestrictTo names %s, which the registry does not hold; check the spelling or register the tool first", quoteAll(e.Tools))
	default:
		if len(e.Tools) > 1 {
			return fmt.Sprintf("tool registry: the parameters schemas of %s do not compile; the first: %v", quoteAll(e.Tools), e.Err)
		}
		return fmt.Sprintf("tool registry: the parameters schema of %s does not compile: %v", quoteAll(e.Tools), e.Err)
	}
}

func (e *RegistryError) Unwrap() error { return e.Err }

// SchemaCache shares compiled parameter schemas between registries built
// from the same schemas (a conformance run builds the same registry many
// times). It is safe for concurrent use; the zero value is ready.
type SchemaCache struct {
	mu sync.Mutex
	m  map[string]*jsonschema.Schema
}

func (c *SchemaCache) compile(name string, params map[string]any) (*jsonschema.Schema, error) {
	if c == nil {
		return compileSchema(name, params)
	}
	key, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	sch, ok := c.m[string(key)]
	c.mu.Unlock()
	if ok {
		return sch, nil
	}
	sch, err = compileSchema(name, params)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.m == nil {
		c.m = map[string]*jsonschema.Schema{}
	}
	c.m[string(key)] = sch
	c.mu.Unlock()
	return sch, nil
}

// NewRegistry builds a registry. Duplicate names and parameter schemas that
// do not compile are errors here, not at the first call.
func NewRegistry(specs ...ToolSpec) (*ToolRegistry, error) {
	return NewRegistryWithCache(nil, specs...)
}

// NewRegistryWithCache is NewRegistry with compiled schemas taken from,
// and added to, cache (nil compiles every schema).
func NewRegistryWithCache(cache *SchemaCache, specs ...ToolSpec) (*ToolRegistry, error) {
	r := &ToolRegistry{byName: map[string]int{}, schemas: map[string]*jsonschema.Schema{}}
	var dups []string
	for i := range specs {
		s := specs[i]
		if _, seen := r.byName[s.Name]; seen {
			dups = append(dups, s.Name)
			continue
		}
		r.byName[s.Name] = len(r.specs)
		r.specs = append(r.specs, &s)
	}
	if len(dups) > 0 {
		sort.Strings(dups)
		return nil, &RegistryError{Kind: "duplicate_tool", Tools: slices.Compact(dups)}
	}
	// Every broken schema is named, sorted, as every spec without a
	// handler is (0006.D6.construction.all); Err is the first one's.
	var broken []string
	var first error
	for _, s := range r.specs {
		sch, err := cache.compile(s.Name, s.Parameters)
		if err != nil {
			broken = append(broken, s.Name)
			first = cmp.Or(first, err)
			continue
		}
		r.schemas[s.Name] = sch
	}
	if len(broken) > 0 {
		sort.Strings(broken)
		return nil, &RegistryError{Kind: "invalid_schema", Tools: broken, Err: first}
	}
	return r, nil
}

func compileSchema(name string, params map[string]any) (*jsonschema.Schema, error) {
	if params == nil {
		params = map[string]any{"type": "object"}
	}
	if bad := checkKeywords(params); len(bad) > 0 {
		errs := make([]error, len(bad))
		for i, e := range bad {
			errs[i] = e
		}
		return nil, errors.Join(errs...)
	}
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("encode schema: %w", err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("decode schema: %w", err)
	}
	url := "mem://tools/" + resourceName(name) + ".json"
	c := jsonschema.NewCompiler()
	c.UseRegexpEngine(compileECMA)
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	return c.Compile(url)
}

// Lookup returns the spec registered under name.
func (r *ToolRegistry) Lookup(name string) (*ToolSpec, bool) {
	i, ok := r.byName[name]
	if !ok {
		return nil, false
	}
	return r.specs[i], true
}

// Names lists the registered tool names in registration order.
func (r *ToolRegistry) Names() []string {
	out := make([]string, len(r.specs))
	for i, s := range r.specs {
		out[i] = s.Name
	}
	return out
}

// ValidationError says why a tool call was refused before reaching any
// executor. Kind is one of unknown_tool, missing_arguments, schema.
type ValidationError struct {
	Kind   string
	Tool   string
	Detail string
	// Keywords is, for a schema failure, where in the schema each failing
	// keyword sits (a JSON pointer ending with the keyword, sorted, each
	// once), every level of the failure: an anyOf and the branch keywords
	// that made it fail. Tests read it; the message does not carry it.
	Keywords []string
}

func (e *ValidationError) Error() string {
	switch e.Kind {
	case "unknown_tool":
		return fmt.Sprintf("tool %q does not exist", e.Tool)
	case "missing_arguments":
		return fmt.Sprintf("tool %q was called without arguments", e.Tool)
	}
	return fmt.Sprintf("arguments for tool %q do not match its schema: %s", e.Tool, e.Detail)
}

// Validate checks that the action names a registered tool and that its
// arguments match that tool's schema, exactly as sent: nothing is coerced
// (0008.D4.validate). A call with no arguments object is refused even when
// the schema would accept {} (reference interpretation 0003.D6.bare-call).
func (r *ToolRegistry) Validate(a action.Action) error {
	if _, ok := r.byName[a.Tool]; !ok {
		return &ValidationError{Kind: "unknown_tool", Tool: a.Tool}
	}
	if !a.HasArgs {
		return &ValidationError{Kind: "missing_arguments", Tool: a.Tool}
	}
	inst, err := toSchemaValue(a.Arguments)
	if err != nil {
		return &ValidationError{Kind: "schema", Tool: a.Tool, Detail: err.Error()}
	}
	if err := r.schemas[a.Tool].Validate(inst); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			return &ValidationError{Kind: "schema", Tool: a.Tool, Detail: describe(ve), Keywords: keywordLocations(ve)}
		}
		return &ValidationError{Kind: "schema", Tool: a.Tool, Detail: err.Error()}
	}
	return nil
}

// toSchemaValue gives the validator the arguments as plain JSON values.
// Arguments decoded from model output already are (numbers stay
// json.Number, so nothing is coerced); anything else is re-read through
// the validator's own decoder.
func toSchemaValue(args map[string]any) (any, error) {
	if plainJSON(args, 0) {
		return args, nil
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return nil, err
	}
	return jsonschema.UnmarshalJSON(bytes.NewReader(raw))
}

var printer = message.NewPrinter(language.English)

// describe renders the deepest causes of a schema failure as
// "at /ptr: message" so the model reads what to change, not a schema dump.
func describe(ve *jsonschema.ValidationError) string {
	var leaves []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			ptr := "/" + strings.Join(e.InstanceLocation, "/")
			leaves = append(leaves, fmt.Sprintf("at %s: %s", ptr, e.ErrorKind.LocalizedString(printer)))
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	sort.Strings(leaves)
	return strings.Join(leaves, "; ")
}

// keywordLocations lists the schema location of every failing keyword of
// ve's tree: the node's dereferenced location and its keyword path.
func keywordLocations(ve *jsonschema.ValidationError) []string {
	var out []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		_, frag, _ := strings.Cut(e.SchemaURL, "#")
		if kw := e.ErrorKind.KeywordPath(); len(kw) > 0 {
			frag += "/" + strings.Join(kw, "/")
		} else if _, not := e.ErrorKind.(*kind.Not); not {
			// The validator gives `not` no keyword path of its own.
			frag += "/not"
		}
		out = append(out, frag)
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	sort.Strings(out)
	return slices.Compact(out)
}

// RestrictTo returns a new registry holding only the named tools, in the
// original order; the receiver is unchanged and handlers travel with their
// specs (0008.D1). Naming a tool the registry lacks is an error.
func (r *ToolRegistry) RestrictTo(names ...string) (*ToolRegistry, error) {
	want := map[string]bool{}
	var unknown []string
	for _, n := range names {
		if _, ok := r.byName[n]; !ok && !want[n] {
			// Each unknown name once, however often the list repeats it
			// (0006.D6.restrict-unknown).
			unknown = append(unknown, n)
		}
		want[n] = true
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, &RegistryError{Kind: "unknown_tool", Tools: unknown}
	}
	out := &ToolRegistry{byName: map[string]int{}, schemas: map[string]*jsonschema.Schema{}}
	for _, s := range r.specs {
		if want[s.Name] {
			out.byName[s.Name] = len(out.specs)
			out.specs = append(out.specs, s)
			out.schemas[s.Name] = r.schemas[s.Name]
		}
	}
	return out, nil
}

// ModelTool is one entry of SchemaForModel.
type ModelTool struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Parameters  map[string]any `json:"parameters"`
}

// SchemaForModel returns what the model may be shown about the tools, from
// the same specs that validation and dispatch use.
func (r *ToolRegistry) SchemaForModel() []ModelTool {
	out := make([]ModelTool, len(r.specs))
	for i, s := range r.specs {
		out[i] = ModelTool{Name: s.Name, Description: s.Description, Parameters: s.Parameters}
	}
	return out
}

// MissingHandlersError is Executor's refusal; it names every tool that has
// no handler, sorted (0008.D2).
type MissingHandlersError struct {
	Tools []string
}

func (e *MissingHandlersError) Error() string {
	noun := "tool has"
	if len(e.Tools) > 1 {
		noun = "tools have"
	}
	return fmt.Sprintf("tool registry: cannot derive an executor: %d %s no handler: %s. Give each ToolSpec a Handler, "+
		"narrow the registry with RestrictTo to tools that have one, or pass your own action executor instead of Executor()",
		len(e.Tools), noun, strings.Join(e.Tools, ", "))
}

// Executor derives the registry's action executor. It checks every spec at
// this moment and refuses when any lacks a handler, so a missing handler
// fails at assembly rather than at the step that happens to call it.
func (r *ToolRegistry) Executor() (*RegistryExecutor, error) {
	var missing []string
	for _, s := range r.specs {
		if s.Handler == nil {
			missing = append(missing, s.Name)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return nil, &MissingHandlersError{Tools: missing}
	}
	return &RegistryExecutor{registry: r}, nil
}

// SameTools reports whether two registries hold the same registered specs
// (by identity) under the same names, as 0006.D3.same defines it: a
// registry narrowed twice from one parent to the same names is the same,
// one rebuilt from copies of the specs is not (a handler cannot be
// compared by content).
func (r *ToolRegistry) SameTools(o *ToolRegistry) bool {
	if r == nil || o == nil || len(r.specs) != len(o.specs) {
		return r == o
	}
	for name, i := range r.byName {
		j, ok := o.byName[name]
		if !ok || o.specs[j] != r.specs[i] {
			return false
		}
	}
	return true
}

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

func plainJSON(v any, depth int) bool {
	if depth > 64 {
		return false
	}
	switch x := v.(type) {
	case nil, string, bool, json.Number, float64:
		return true
	case map[string]any:
		for _, e := range x {
			if !plainJSON(e, depth+1) {
				return false
			}
		}
		return true
	case []any:
		for _, e := range x {
			if !plainJSON(e, depth+1) {
				return false
			}
		}
		return true
	}
	return false
}

// resourceName is name where it can stand in a URL as it is, and its
// bytes in hex where it cannot (a Chinese tool name, say): the compiler
// percent-encodes such a URL and then cannot load the resource it was
// given. Each schema compiles alone, so the name only labels messages.
func resourceName(name string) string {
	if strings.Trim(name, urlSafe) == "" {
		return name
	}
	return fmt.Sprintf("tool-%x", name)
}

// urlSafe are the bytes a tool name may keep in its schema's URL.
const urlSafe = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-."
