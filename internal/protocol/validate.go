package protocol

import (
	"fmt"
	"strings"
	"sync"

	"github.com/polyloop/polyloop-conform/docs"
	"github.com/polyloop/polyloop-conform/internal/schema"
	"github.com/polyloop/polyloop-conform/trajectories"
)

// SchemaFile is where the protocol's JSON Schema lives in the repository.
const SchemaFile = "docs/protocol.schema.json"

var messageSchema = sync.OnceValues(func() (*schema.Schema, error) {
	return schema.Compile(SchemaFile, docs.ProtocolSchema())
})

// check validates one decoded line against the protocol schema and, for a
// result, its trajectory against the trajectory schema, as received: no
// unknown key is dropped and no missing one zero-filled before judging.
// Problems name the JSON pointer inside the message.
func check(doc any) error {
	sch, err := messageSchema()
	if err != nil {
		return err
	}
	if probs := sch.Validate(doc); len(probs) > 0 {
		return fmt.Errorf("%w: does not match %s: %s", ErrBadMessage, SchemaFile, join(probs, ""))
	}
	m, _ := doc.(map[string]any)
	if m["type"] != TypeResult {
		return nil
	}
	tsch, err := trajectories.Schema()
	if err != nil {
		return err
	}
	if probs := tsch.Validate(m["trajectory"]); len(probs) > 0 {
		return fmt.Errorf("%w: the result's trajectory does not match trajectories/%s: %s", ErrBadMessage, trajectories.SchemaFile, join(probs, "/trajectory"))
	}
	return nil
}

func join(probs []schema.Problem, prefix string) string {
	const most = 8
	var b strings.Builder
	for i, p := range probs {
		if i == most {
			fmt.Fprintf(&b, "; and %d more", len(probs)-most)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		ptr := prefix + p.Pointer
		if ptr == "" {
			ptr = "/"
		}
		fmt.Fprintf(&b, "at %s: %s", ptr, p.Message)
	}
	return b.String()
}
