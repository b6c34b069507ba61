package deviation

import (
	"context"
	"maps"
	"slices"
	"strings"

	"github.com/polyloop/polyloop-conform/reference/tools"
)

// The wrappers around the tool registry's construction (0006, 0008.D1).

// duplicatesReplaced lets a later spec of the same name replace the
// earlier (0006.D6.construction).
func duplicatesReplaced(specs []tools.ToolSpec, _ *tools.SchemaCache) []tools.ToolSpec {
	var out []tools.ToolSpec
	for _, s := range specs {
		if i := slices.IndexFunc(out, func(o tools.ToolSpec) bool { return o.Name == s.Name }); i >= 0 {
			out[i] = s
			continue
		}
		out = append(out, s)
	}
	return out
}

// brokenSchemaAccepted takes a schema that does not compile as accepting
// any object (0006.D6.construction).
func brokenSchemaAccepted(specs []tools.ToolSpec, cache *tools.SchemaCache) []tools.ToolSpec {
	out := slices.Clone(specs)
	for i := range out {
		if _, err := tools.NewRegistryWithCache(cache, out[i]); err != nil {
			out[i].Parameters = map[string]any{"type": "object"}
		}
	}
	return out
}

// unknownDropped leaves out of restrict_to the names the registry does not
// have (0006.D6).
func unknownDropped(full *tools.ToolRegistry, names []string) []string {
	return slices.DeleteFunc(slices.Clone(names), func(n string) bool { _, ok := full.Lookup(n); return !ok })
}

// handlersDropped copies the restricted specs without their handlers (0008.D1).
func handlersDropped(visible *tools.ToolRegistry, cache *tools.SchemaCache) (*tools.ToolRegistry, error) {
	var bare []tools.ToolSpec
	for _, n := range visible.Names() {
		spec, _ := visible.Lookup(n)
		c := *spec
		c.Handler = nil
		bare = append(bare, c)
	}
	return tools.NewRegistryWithCache(cache, bare...)
}

// invalidSchemaFirstOnly leaves every broken spec after the first out of
// the invalid_schema error by taking it as accepting any object
// (0006.D6.construction.all).
func invalidSchemaFirstOnly(specs []tools.ToolSpec, cache *tools.SchemaCache) []tools.ToolSpec {
	out := slices.Clone(specs)
	first := true
	for i := range out {
		if _, err := tools.NewRegistryWithCache(cache, out[i]); err != nil {
			if !first {
				out[i].Parameters = map[string]any{"type": "object"}
			}
			first = false
		}
	}
	return out
}

// unresolvedRefAccepted takes a schema whose $ref does not resolve as
// accepting any object (0006.D6.compile).
func unresolvedRefAccepted(specs []tools.ToolSpec, cache *tools.SchemaCache) []tools.ToolSpec {
	out := slices.Clone(specs)
	for i := range out {
		if _, err := tools.NewRegistryWithCache(cache, out[i]); err != nil && strings.Contains(err.Error(), "not found") {
			out[i].Parameters = map[string]any{"type": "object"}
		}
	}
	return out
}

// booleansAreNumbers lets true and false pass where a top-level property
// wants an integer or a number, as Python's bool is an int
// (0006.D6.no-coercion.json-types).
func booleansAreNumbers(specs []tools.ToolSpec, _ *tools.SchemaCache) []tools.ToolSpec {
	out := slices.Clone(specs)
	for i, s := range out {
		props, _ := s.Parameters["properties"].(map[string]any)
		if props == nil {
			continue
		}
		widened := maps.Clone(props)
		for name, p := range props {
			pm, _ := p.(map[string]any)
			if t, _ := pm["type"].(string); t == "integer" || t == "number" {
				pm = maps.Clone(pm)
				pm["type"] = []any{t, "boolean"}
				widened[name] = pm
			}
		}
		params := maps.Clone(s.Parameters)
		params["properties"] = widened
		out[i].Parameters = params
	}
	return out
}

// defaultsFilled fills the schema's defaults for the top-level properties
// a call left out into the handler's arguments (0006.D6.no-defaults).
func defaultsFilled(specs []tools.ToolSpec, _ *tools.SchemaCache) []tools.ToolSpec {
	out := slices.Clone(specs)
	for i, s := range out {
		props, _ := s.Parameters["properties"].(map[string]any)
		if s.Handler == nil || props == nil {
			continue
		}
		h := s.Handler
		out[i].Handler = func(ctx context.Context, args map[string]any) (string, error) {
			filled := maps.Clone(args)
			if filled == nil {
				filled = map[string]any{}
			}
			for name, p := range props {
				pm, _ := p.(map[string]any)
				if d, has := pm["default"]; has {
					if _, given := filled[name]; !given {
						filled[name] = d
					}
				}
			}
			return h(ctx, filled)
		}
	}
	return out
}
