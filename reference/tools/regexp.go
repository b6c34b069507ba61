package tools

import (
	"github.com/dlclark/regexp2/v2"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// ecmaRegexp is a `pattern` (or `patternProperties` key) compiled as the
// dialect reads it: JSON Schema 2020-12 says an ECMA-262 regular
// expression, so lookahead, lookbehind and back-references compile, and
// what ECMA-262 refuses does not (0006.D6.pattern). Go's regexp is RE2,
// which has none of the three, and was the reason `^(?=a)a$` was refused.
type ecmaRegexp struct {
	re *regexp2.Regexp
}

// MatchString reports whether s contains a match (patterns are not
// anchored). A match the engine cannot finish (its backtracking stack
// limit) is no match: the arguments are refused, never let through.
func (r ecmaRegexp) MatchString(s string) bool {
	ok, err := r.re.MatchString(s)
	return err == nil && ok
}

func (r ecmaRegexp) String() string { return r.re.String() }

// compileECMA is the schema compiler's regexp hook. The Unicode flag
// (`u`) is set: a JSON string is a sequence of code points, `.` and
// classes then match a code point as minLength counts one, and the
// escapes ECMA-262 reserves (`\a`, an unknown `\p{...}`) are errors.
func compileECMA(pattern string) (jsonschema.Regexp, error) {
	re, err := regexp2.Compile(pattern, regexp2.ECMAScript|regexp2.Unicode)
	if err != nil {
		return nil, err
	}
	return ecmaRegexp{re: re}, nil
}
