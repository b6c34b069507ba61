package tools

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/polyloop/polyloop-conform/internal/jsontext"
)

// The keywords a tool's parameters schema may use (0006.D6.keywords), by
// what their value holds: subschemas are walked, everything else is not.
// The admitted keywords whose value is no schema (type, enum, const,
// required, the numeric and length bounds, pattern, $ref, $anchor,
// $schema, and the annotations) need no entry: only $ref and $schema have
// values the walk checks.
var (
	// schemaValued holds one subschema.
	schemaValued = []string{"items", "additionalProperties", "not"}
	// schemaListed holds a list of subschemas.
	schemaListed = []string{"prefixItems", "allOf", "anyOf", "oneOf"}
	// schemaMapped holds an object of subschemas.
	schemaMapped = []string{"properties", "$defs"}
	// outside are the 2020-12 keywords the table leaves out: a schema
	// using one does not compile.
	outside = []string{
		"patternProperties", "propertyNames", "dependentRequired", "dependentSchemas",
		"minProperties", "maxProperties", "uniqueItems", "contains", "minContains", "maxContains",
		"if", "then", "else", "unevaluatedProperties", "unevaluatedItems",
		"$id", "$dynamicRef", "$dynamicAnchor", "$vocabulary",
	}
)

// dialectURIs are the ways to name 2020-12 in $schema.
var dialectURIs = []string{"https://json-schema.org/draft/2020-12/schema", "https://json-schema.org/draft/2020-12/schema#"}

// KeywordError is a schema that uses what 0006.D6.keywords leaves out:
// Keyword is the keyword, Pointer where it sits in the schema.
type KeywordError struct {
	Keyword string
	Pointer string
	Reason  string
}

func (e *KeywordError) Error() string {
	at := e.Pointer
	if at == "" {
		at = "/"
	}
	return fmt.Sprintf("at %s: keyword %q %s", at, e.Keyword, e.Reason)
}

// checkKeywords walks a parameters schema through the admitted keywords
// and returns every use of what the table leaves out, sorted by pointer:
// a 2020-12 keyword outside it, a $ref that is not a fragment of the
// schema itself, a $schema naming another dialect. Keys that are no
// keyword of the dialect are annotations and are not walked.
func checkKeywords(schema any) []*KeywordError {
	var out []*KeywordError
	var walk func(v any, path []string)
	walk = func(v any, path []string) {
		m, ok := v.(map[string]any)
		if !ok {
			return // true, false, or a value the meta-schema refuses
		}
		at := func(k string) []string { return append(slices.Clone(path), k) }
		for k, val := range m {
			switch {
			case slices.Contains(outside, k):
				out = append(out, &KeywordError{Keyword: k, Pointer: jsontext.Pointer(at(k)),
					Reason: "is JSON Schema 2020-12 but not a keyword a tool's parameters may use (0006.D6.keywords); express the constraint with the admitted keywords or check it in the handler"})
			case k == "$ref":
				if ref, _ := val.(string); !strings.HasPrefix(ref, "#") {
					out = append(out, &KeywordError{Keyword: k, Pointer: jsontext.Pointer(at(k)),
						Reason: fmt.Sprintf("is %q, not a reference inside the schema; nothing is fetched (0006.D6.compile): write #/$defs/NAME or #ANCHOR", val)})
				}
			case k == "$schema":
				if s, _ := val.(string); !slices.Contains(dialectURIs, s) {
					out = append(out, &KeywordError{Keyword: k, Pointer: jsontext.Pointer(at(k)),
						Reason: fmt.Sprintf("names %q; a tool's parameters are JSON Schema 2020-12 (0006.D6.compile): name %s or leave $schema out", val, dialectURIs[0])})
				}
			case slices.Contains(schemaValued, k):
				walk(val, at(k))
			case slices.Contains(schemaListed, k):
				list, _ := val.([]any)
				for i, sub := range list {
					walk(sub, append(at(k), strconv.Itoa(i)))
				}
			case slices.Contains(schemaMapped, k):
				subs, _ := val.(map[string]any)
				for name, sub := range subs {
					walk(sub, append(at(k), name))
				}
			}
		}
	}
	walk(schema, nil)
	sort.Slice(out, func(i, j int) bool { return out[i].Pointer < out[j].Pointer })
	return out
}
