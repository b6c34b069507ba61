package compare

import (
	"fmt"
	"regexp"
)

// Class says how a field is compared. The trajectory format declares one
// class per field (trajectories.Classifier reads them from the schema);
// Diff applies them when Options.Class is set.
type Class uint8

const (
	// Normative values are decided by the design and compared exactly.
	Normative Class = iota
	// Vocabulary values are names the design leaves open and the suite
	// fixes (stop reasons' spelling, repair names, event types). They are
	// compared exactly; the class exists so reports and documents can say
	// that the name, not the behaviour, is the suite's choice.
	Vocabulary
	// Text is wording the design leaves to the implementation: an
	// executor's own sentence, a parse error, an error message. Only the
	// text rule applies (see TextRule), never word-for-word equality.
	Text
)

var classNames = [...]string{Normative: "normative", Vocabulary: "vocabulary", Text: "text"}

func (c Class) String() string {
	if int(c) < len(classNames) {
		return classNames[c]
	}
	return fmt.Sprintf("Class(%d)", c)
}

// MarshalText renders the class by name in JSON reports.
func (c Class) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// ParseClass reads a class name as written in the trajectory schema.
func ParseClass(s string) (Class, error) {
	for i, n := range classNames {
		if n == s {
			return Class(i), nil
		}
	}
	return 0, fmt.Errorf("unknown comparison class %q (want normative, vocabulary or text)", s)
}

// stackTraces are what the common runtimes print for a stack, one
// pattern per runtime, each anchored on something prose does not write: a
// header only a runtime prints, or a frame with a source file and line in
// that runtime's own layout. stackTraceTest shows one trace of each and
// the prose none of them may flag.
var stackTraces = []struct {
	runtime string
	re      *regexp.Regexp
}{
	{"Python", regexp.MustCompile(`Traceback \(most recent call last\)|(?m)^\s*File "[^"]+", line \d+`)},
	{"Go", regexp.MustCompile(`(?m)^goroutine \d+ \[|\.go:\d+\b`)},
	{"Java/Kotlin", regexp.MustCompile(`(?m)^\s*at [\w$.<>/]+\((?:[\w$]+\.(?:java|kt|kts|scala|groovy):\d+|Native Method|Unknown Source)\)|Exception in thread "[^"]*" [\w.$]+`)},
	{"C#", regexp.MustCompile("(?m)^\\s*at [\\w`<>]+\\.[\\w.`<>\\[\\],|]+\\([^)\\n]*\\)(?: in .+:line \\d+)?\\s*$|--- End of (?:inner exception )?stack trace")},
	{"JavaScript/TypeScript", regexp.MustCompile(`(?m)^\s*at (?:.+ \()?(?:file://|node:)?[^\s()]*[/.][^\s()]*:\d+:\d+\)?\s*$|\.(?:m?js|cjs|ts|tsx|jsx):\d+:\d+`)},
	{"Rust", regexp.MustCompile(`thread '[^']*' panicked at|(?m)^stack backtrace:|\.rs:\d+:\d+`)},
	{"C++", regexp.MustCompile(`(?m)^#\d+\s+0x[0-9a-fA-F]+ in |terminate called after throwing an instance of|\.(?:cpp|cc|cxx|hpp|hh|h):\d+\b`)},
	{"PHP", regexp.MustCompile(`(?m)^#\d+ \S+\.php\(\d+\): |(?m)^#\d+ \{main\}|PHP (?:Fatal|Parse|Warning) error|\.php(?::\d+\b| on line \d+)`)},
	{"Ruby", regexp.MustCompile("\\.rb:\\d+:in [`'\"]")},
	{"Elixir", regexp.MustCompile(`(?m)^\s*\*\* \([A-Z][\w.]*\) |(?m)^\s*\((?:\w+) [\d.]+\) \S+\.exs?:\d+: |\.exs?:\d+: [A-Z][\w.]*\.\w+[!?]?/\d`)},
}

// StackTraceRuntime names the runtime whose stack trace s carries, or ""
// when it carries none.
func StackTraceRuntime(s string) string {
	for _, st := range stackTraces {
		if st.re.MatchString(s) {
			return st.runtime
		}
	}
	return ""
}

// TextRule checks an implementation-text value against what every
// implementation must respect whatever its wording: the value is a
// string; it is non-empty wherever the reference's is (a sentence is
// required, its words are not); and it carries no stack trace, which
// 0008.D4 keeps out of observations and which leaks library internals
// into audit and prompts. It returns "" when got is acceptable, else the
// rule got breaks, for the difference report.
func TextRule(want, got any) string {
	g, ok := got.(string)
	if !ok {
		return fmt.Sprintf("implementation text must be a string, got %s", Render(got))
	}
	if w, _ := want.(string); w != "" && g == "" {
		return "implementation text: want a non-empty sentence (its wording is the implementation's), got an empty string"
	}
	if rt := StackTraceRuntime(g); rt != "" {
		return "implementation text must not carry a stack trace (" + rt + "'s), got " + Render(g)
	}
	return ""
}

// runnerDir matches the part of a path the runner draws anew for every
// run: the random suffix os.MkdirTemp gives its temporary directories
// (polyloop-conform-journal-2712389120, the parent of a run's
// journal_dir), whatever the directory they sit in.
var runnerDir = regexp.MustCompile(`\b(polyloop(?:-[a-z]+)+-)[0-9]+\b`)

// MaskRunnerDirs replaces the random part of every runner directory named
// in s with "*", so that a sentence naming its run's journal file (as
// 0002.D5 and 0002.D6 ask an error to) reads the same in every run.
func MaskRunnerDirs(s string) string { return runnerDir.ReplaceAllString(s, "${1}*") }

// Verbatim is the strict profile's word-for-word comparison of text:
// equal strings, once the random part of the runner's temporary
// directories is masked. That part is the runner's choice, drawn anew for
// every run, so a journal path in an error message differs between two
// runs of one implementation; every word the implementation chose must
// not.
func Verbatim(a, b any) bool {
	x, ok1 := a.(string)
	y, ok2 := b.(string)
	if !ok1 || !ok2 {
		return equalJSON(a, b)
	}
	return x == y || MaskRunnerDirs(x) == MaskRunnerDirs(y)
}
