package scenarios

import (
	"fmt"

	"go.yaml.in/yaml/v3"
)

// Behaviours is a handler script: one behaviour or a list of them.
type Behaviours []Behaviour

// UnmarshalYAML accepts a single mapping as a one-entry list.
func (b *Behaviours) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.MappingNode {
		var one Behaviour
		if err := n.Decode(&one); err != nil {
			return err
		}
		*b = Behaviours{one}
		return nil
	}
	var many []Behaviour
	if err := n.Decode(&many); err != nil {
		return err
	}
	*b = many
	return nil
}

// UnmarshalYAML accepts a plain string as the turn's output.
func (t *ModelTurn) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		t.Output = n.Value
		return nil
	case yaml.MappingNode:
		type plain ModelTurn
		var p plain
		if err := n.Decode(&p); err != nil {
			return err
		}
		*t = ModelTurn(p)
		return nil
	}
	return fmt.Errorf("line %d: a model turn is a string or {block: true}", n.Line)
}
