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

// stackTrace matches what the common runtimes print for a stack: Python's
// traceback header and frames, Go's goroutine header and file:line frames,
// and the JVM's and JavaScript's "at" frames.
var stackTrace = regexp.MustCompile(`Traceback \(most recent call last\)|(?m)^goroutine \d+ \[|(?m)^\s+File "[^"]+", line \d+|\.(go|py|js|ts|java|rb|rs):\d+\b|(?m)^\s+at \S+ \(`)

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
	if stackTrace.MatchString(g) {
		return "implementation text must not carry a stack trace, got " + Render(g)
	}
	return ""
}
