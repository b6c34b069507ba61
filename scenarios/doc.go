// Package scenarios holds the conformance scenarios, their JSON Schema and
// the loader that reads them, embedded so the CLI runs from any directory.
//
// A scenario is one YAML file named after its ID. It declares the tools
// (schema, replay policy, completes-run flag, and how the fake handler
// behaves), the definition and request(s) of a run, the model's scripted
// outputs, any faults, and an expect block written by hand from the design
// docs. The expect block is the second oracle: it is checked against the
// implementation's trajectory and against the golden, so a golden can never
// silently become the truth. The format manual is docs/scenario-format.md.
package scenarios
