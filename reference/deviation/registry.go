package deviation

import (
	"slices"

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
