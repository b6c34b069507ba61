package jsontext

import (
	"errors"
	"testing"
)

func TestCheckDuplicateKeys(t *testing.T) {
	for _, tc := range []struct {
		doc, pointer string
	}{
		{`{"a":1,"b":2}`, ""},
		{`{"a":1,"a":2}`, "/a"},
		{`{"trajectory":{"end":null,"steps":[],"end":{"reason":"x"}}}`, "/trajectory/end"},
		{`{"x":[{"k":1},{"k":1,"k":2}]}`, "/x/1/k"},
		{`{"a/b":{"~":1,"~":2}}`, "/a~1b/~0"},
		{`[{"a":{"a":1}},{"a":2}]`, ""}, // the same key in different objects is fine
		{`"just a string"`, ""},
	} {
		err := CheckDuplicateKeys([]byte(tc.doc))
		var dup *DuplicateKeyError
		switch {
		case tc.pointer == "" && err != nil:
			t.Errorf("%s: unexpected %v", tc.doc, err)
		case tc.pointer != "" && !errors.As(err, &dup):
			t.Errorf("%s: want a duplicate at %s, got %v", tc.doc, tc.pointer, err)
		case tc.pointer != "" && dup.Pointer != tc.pointer:
			t.Errorf("%s: pointer %s, want %s", tc.doc, dup.Pointer, tc.pointer)
		}
	}
	if err := CheckDuplicateKeys([]byte(`{"a":`)); err == nil {
		t.Error("a truncated document passed")
	}
}
