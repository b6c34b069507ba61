package protocol

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/polyloop/polyloop-conform/docs"
)

// TestProtocolDocNamesTheSchema keeps docs/protocol.md equal to the
// published schema in what an implementer looks up: every message type
// and every capability the schema allows is named in the page, and every
// type the runner knows is in the schema.
func TestProtocolDocNamesTheSchema(t *testing.T) {
	page, err := os.ReadFile("../../docs/protocol.md")
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Properties struct {
			Type struct {
				Enum []string `json:"enum"`
			} `json:"type"`
		} `json:"properties"`
		Defs struct {
			Hello struct {
				Properties struct {
					Capabilities struct {
						Items struct {
							Enum []string `json:"enum"`
						} `json:"items"`
					} `json:"capabilities"`
				} `json:"properties"`
			} `json:"hello"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(docs.ProtocolSchema(), &schema); err != nil {
		t.Fatal(err)
	}
	types := schema.Properties.Type.Enum
	caps := schema.Defs.Hello.Properties.Capabilities.Items.Enum
	if len(types) == 0 || len(caps) == 0 {
		t.Fatal("no message types or capabilities in docs/protocol.schema.json")
	}
	for _, name := range append(append([]string(nil), types...), caps...) {
		if !strings.Contains(string(page), "`"+name) && !strings.Contains(string(page), name+" {") {
			t.Errorf("docs/protocol.md does not name %q, which docs/protocol.schema.json allows", name)
		}
	}
	for typ := range knownTypes {
		found := false
		for _, s := range types {
			found = found || s == typ
		}
		if !found {
			t.Errorf("the runner knows message type %q, which docs/protocol.schema.json does not list", typ)
		}
	}
}
