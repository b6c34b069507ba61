package schema

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// suiteDir is the JSON-Schema-Test-Suite data the reference's registry is
// tested with (its README names the source and commit).
const suiteDir = "../../reference/tools/testdata/json-schema-test-suite"

// TestLiteAgreesWithTheDialect runs every case of the taken
// JSON-Schema-Test-Suite files whose schema CompileLite accepts through
// both validators: Lite must give the suite's verdict, and the general
// validator (Compile, the same regexp engine) too. Lite refuses a schema
// outside its subset at compile time; what it compiles it must judge at
// every depth as the dialect does: integer-valued numbers, enum and const
// across types, required and items below the top, ECMA-262 patterns.
func TestLiteAgreesWithTheDialect(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(suiteDir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no test-suite files in %s: %v", suiteDir, err)
	}
	cases, liteCases := 0, 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var groups []struct {
			Description string          `json:"description"`
			Schema      json.RawMessage `json:"schema"`
			Tests       []struct {
				Description string          `json:"description"`
				Data        json.RawMessage `json:"data"`
				Valid       bool            `json:"valid"`
			} `json:"tests"`
		}
		if err := json.Unmarshal(data, &groups); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, g := range groups {
			lite, lerr := liteOrNil(g.Schema)
			full, ferr := Compile("case.json", g.Schema)
			for _, c := range g.Tests {
				cases++
				where := filepath.Base(f) + " / " + g.Description + " / " + c.Description
				inst, err := DecodeJSON(c.Data)
				if err != nil {
					t.Fatalf("%s: %v", where, err)
				}
				if ferr == nil && (len(full.Validate(inst)) == 0) != c.Valid {
					t.Errorf("%s: Compile says valid=%v, the suite %v", where, !c.Valid, c.Valid)
				}
				if lite == nil || lerr != nil {
					continue
				}
				liteCases++
				if got := len(lite.Validate(inst)) == 0; got != c.Valid {
					t.Errorf("%s: Lite says valid=%v, the suite %v: %v", where, got, c.Valid, lite.Validate(inst))
				}
			}
		}
	}
	if liteCases < 150 {
		t.Fatalf("Lite compiled the schemas of %d cases of %d: too few to say it agrees", liteCases, cases)
	}
	t.Logf("%d cases, %d through Lite, every verdict the suite's", cases, liteCases)
}

// liteOrNil compiles a case's schema for Lite, nil when it is outside
// Lite's subset (a boolean schema, a keyword Lite refuses).
func liteOrNil(doc []byte) (*Lite, error) {
	if !bytes.HasPrefix(bytes.TrimSpace(doc), []byte("{")) {
		return nil, nil
	}
	l, err := CompileLite("case.json", doc)
	if err != nil && (strings.Contains(err.Error(), "outside the subset") || strings.Contains(err.Error(), "Lite supports")) {
		return nil, nil
	}
	return l, err
}
