package schema

import (
	"github.com/dlclark/regexp2/v2"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// ecmaRegexp is a `pattern` compiled as JSON Schema 2020-12 reads it: an
// ECMA-262 regular expression with the Unicode flag, the reading the
// records decide for tool schemas (0006.D6.pattern) and that this
// project's own schemas, 2020-12 too, get as well. Compile hands it to
// the general validator and CompileLite uses it itself, so the two never
// read one pattern two ways. (reference/tools has its own copy: the
// reference imports nothing of the harness.)
type ecmaRegexp struct {
	re *regexp2.Regexp
}

// MatchString reports whether s contains a match; a match the engine
// cannot finish (its backtracking limit) is no match.
func (r ecmaRegexp) MatchString(s string) bool {
	ok, err := r.re.MatchString(s)
	return err == nil && ok
}

func (r ecmaRegexp) String() string { return r.re.String() }

func compileECMA(pattern string) (ecmaRegexp, error) {
	re, err := regexp2.Compile(pattern, regexp2.ECMAScript|regexp2.Unicode)
	if err != nil {
		return ecmaRegexp{}, err
	}
	return ecmaRegexp{re: re}, nil
}

// regexpEngine is compileECMA as the general validator's hook.
func regexpEngine(pattern string) (jsonschema.Regexp, error) { return compileECMA(pattern) }

// CompilePattern compiles a schema's `pattern` the way both validators
// read it (ECMA-262, Unicode flag) and returns its match function, for
// code that checks a decoded Go value against one keyword of a schema
// without walking a generic document.
func CompilePattern(pattern string) (func(string) bool, error) {
	re, err := compileECMA(pattern)
	if err != nil {
		return nil, err
	}
	return re.MatchString, nil
}
