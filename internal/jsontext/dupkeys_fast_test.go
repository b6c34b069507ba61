package jsontext

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestHasDuplicateKey_agreesWithTheWalk: the byte scanner that lets
// valid lines skip the token walk finds exactly the duplicates the walk
// finds, escapes, nesting and look-alike strings included.
func TestHasDuplicateKey_agreesWithTheWalk(t *testing.T) {
	many := make([]string, 40)
	for i := range many {
		many[i] = fmt.Sprintf(`"k%d":%d`, i, i)
	}
	for _, doc := range []string{
		`{}`, `[]`, `{"a":1}`, `{"a":1,"a":2}`, `{"a":1,"\u0061":2}`, `{"a":{"a":1},"b":[{"a":1,"a":2}]}`,
		`{"a":"{\"a\":1,\"a\":2}"}`, `{"a":"x:","b":"y"}`, `["a","a"]`, `{"a" : 1 , "a" : 2}`,
		`{"x":[1,{"y":2}],"z":{"y":3,"y":4}}`, `{"\\":1,"\\\\":2}`, `{"é":1,"\u00e9":2}`,
		"{" + strings.Join(many, ",") + "}", "{" + strings.Join(many, ",") + `,"k7":0}`,
		// The keys of open objects share one stack: a child's keys are not
		// its parent's, and a parent's keys outlive its closed children.
		`{"a":{"b":1},"b":2}`, `{"a":{"b":1},"a":2}`, `{"a":{"x":1,"y":2},"c":{"x":1},"a":3}`,
		`[{"a":1},{"a":2}]`, `{"a":[{"a":1,"b":{"a":2}}],"b":{"a":[]}}`, `{"a":[{"a":1,"b":{"b":2,"b":3}}]}`,
		"{" + strings.Join(many, ",") + `,"n":{"k1":1,"k2":2}}`, "{" + strings.Join(many, ",") + `,"n":{"k1":1},"k2":2}`,
		`{"n":{` + strings.Join(many, ",") + `},"k1":1,"k1":2}`, `{"n":{` + strings.Join(many, ",") + `},"k1":1}`,
	} {
		fast := hasDuplicateKey([]byte(doc))
		slow := checkByWalk([]byte(doc)) != nil
		if fast != slow {
			t.Errorf("%s: scanner says duplicate=%v, walk says %v", doc, fast, slow)
		}
	}
}

// FuzzHasDuplicateKey: on any valid JSON the scanner and the token walk
// agree on whether some object names a key twice.
func FuzzHasDuplicateKey(f *testing.F) {
	for _, seed := range []string{`{"a":1,"a":2}`, `{"a":{"b":1},"b":2}`, `[{"a":1},{"a":2}]`, `{"\u0061":1,"a":2}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		if !json.Valid(doc) {
			return
		}
		if fast, slow := hasDuplicateKey(doc), checkByWalk(doc) != nil; fast != slow {
			t.Errorf("%s: scanner says duplicate=%v, walk says %v", doc, fast, slow)
		}
	})
}
