package jsontext

import (
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
	} {
		fast := hasDuplicateKey([]byte(doc))
		slow := checkByWalk([]byte(doc)) != nil
		if fast != slow {
			t.Errorf("%s: scanner says duplicate=%v, walk says %v", doc, fast, slow)
		}
	}
}
