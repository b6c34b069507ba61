package trajectories

import (
	"bytes"
	"encoding/json"
	"os"
	"sort"
	"testing"

	"github.com/polyloop/polyloop-conform/internal/jsontext"
)

// TestLiteAgreesWithTheSchema: the fast subset validator and the general
// one give the same verdict on every golden and on each golden broken
// every way the corpus knows (a key removed, an unknown key added, each
// value replaced by a value of every JSON type and by out-of-range
// numbers), down to the first element of every list.
func TestLiteAgreesWithTheSchema(t *testing.T) {
	full, err := Schema()
	if err != nil {
		t.Fatal(err)
	}
	lite, err := LiteSchema()
	if err != nil {
		t.Fatal(err)
	}
	goldens, err := Goldens()
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, 0, len(goldens))
	for id := range goldens {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	kinds := []string{`"s"`, `""`, `1.5`, `-1`, `true`, `null`, `{}`, `["x"]`}
	checked, invalid := 0, 0
	// Every tenth golden under POLYLOOP_LONG=1, which .ci/run sets (README,
	// "The tests"), and every fortieth otherwise: a spread of shapes
	// (phases, resumes, refusals, events) with every mutation of each.
	stride := 40
	if os.Getenv("POLYLOOP_LONG") == "1" {
		stride = 10
	}
	for i, id := range ids {
		if i%stride != 0 {
			continue
		}
		base := decode(t, goldens[id])
		variants := append([]any{base}, jsontext.Mutations(base, kinds, func(k string) bool { return k == "arguments" || k == "decision" })...)
		for _, v := range variants {
			a, b := len(full.Validate(v)) == 0, len(lite.Validate(v)) == 0
			checked++
			if !a {
				invalid++
			}
			if a != b {
				out, _ := json.Marshal(v)
				t.Fatalf("%s: the schema says valid=%v, Lite says %v, on %s\n  schema: %v\n  lite:   %v", id, a, b, out, full.Validate(v), lite.Validate(v))
			}
		}
	}
	if checked < 5000/stride || invalid == 0 {
		t.Fatalf("corpus too small: %d trajectories, %d invalid", checked, invalid)
	}
	t.Logf("%d trajectories, %d invalid, the same verdicts", checked, invalid)
}

func decode(t *testing.T, data []byte) any {
	t.Helper()
	var v any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}
