package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/polyloop/polyloop-conform/trajectories"
)

// Line is one statement about a failing scenario: every problem found at
// one path, whichever oracles found it, merged.
type Line struct {
	Path string // "" for a problem that is not about a field
	// Oracles are the sources that found it: run, schema, expect, golden,
	// golden-expect, observed (the trajectory against the wire).
	Oracles   []string
	Statement string // "path: want X, got Y", or the problem's sentence
	Want, Got any
	// Decisions are an observed problem's own decisions (the wire check
	// knows which decision a disagreement breaks).
	Decisions []string
	// Wording marks a line about words alone: a sentence the design
	// leaves to the implementation that differs from the reference's
	// wording under --strict (engine.Problem.Wording). Want is then the
	// reference's wording, not what the design wants, and the line
	// breaks no decision.
	Wording bool
}

// String renders the line with the oracles that found it.
func (l Line) String() string {
	if l.Path == "" {
		return l.Statement
	}
	if l.Wording {
		return l.Sentence()
	}
	return fmt.Sprintf("%s (%s)", l.Statement, strings.Join(l.Oracles, " and "))
}

// wordingNote ends a wording line: what it is, and what it is not.
const wordingNote = "wording only (--strict): no decision is broken"

// Lines merges a row's problems: the expect block's and the golden's
// statements about the same path become one line naming both oracles.
// Problems without a path keep their own sentence.
func Lines(row Row) []Line {
	var out []Line
	at := map[string]int{}
	for _, p := range row.Problems {
		if p.Path == "" || p.Statement == "" {
			out = append(out, Line{Oracles: []string{p.Source}, Statement: p.Message})
			continue
		}
		if p.Source == "observed" {
			// What the wire showed is its own line, never merged with
			// what the golden says of the same field.
			out = append(out, Line{Path: p.Path, Oracles: []string{p.Source}, Statement: p.Statement, Decisions: p.Decisions})
			continue
		}
		if i, ok := at[p.Path]; ok {
			if !slices.Contains(out[i].Oracles, p.Source) {
				out[i].Oracles = append(out[i].Oracles, p.Source)
			}
			out[i].Wording = out[i].Wording && p.Wording
			if p.Source == "golden" {
				// The golden's statement is the full value; expect may
				// check only part of it.
				out[i].Statement, out[i].Want, out[i].Got = p.Statement, p.Want, p.Got
			}
			continue
		}
		at[p.Path] = len(out)
		out = append(out, Line{Path: p.Path, Oracles: []string{p.Source}, Statement: p.Statement, Want: p.Want, Got: p.Got, Wording: p.Wording})
	}
	return out
}

// Cause is one way an implementation is wrong, seen in one or more
// scenarios: a field (as a pattern, steps[*].context_size) with the
// decisions that govern it, or a run-level problem.
type Cause struct {
	Field     string   `json:"field,omitempty"`
	Decisions []string `json:"decisions,omitempty"`
	// Observed marks a cause found on the wire: the trajectory's account
	// disagrees with what the implementation sent.
	Observed bool `json:"observed,omitempty"`
	// Wording marks a cause of words alone (--strict): a sentence the
	// design leaves open that differs from the reference's wording. It
	// has no decisions.
	Wording bool `json:"wording,omitempty"`
	// Problem is the sentence of a cause that is not about one field.
	Problem   string   `json:"problem,omitempty"`
	Scenarios []string `json:"scenarios"`
	// First is the first scenario's statement, as evidence.
	First string `json:"first"`
}

// String renders the cause as one line.
func (c Cause) String() string {
	n := len(c.Scenarios)
	where := fmt.Sprintf("in %d scenarios", n)
	if n == 1 {
		where = "in 1 scenario"
	}
	if c.Field == "" {
		if why := strings.TrimPrefix(c.First, c.Problem+": "); c.First != "" && why != c.First {
			// The general part groups; the rest of the first sentence
			// says why (a protocol failure's reason, under --brief too).
			return fmt.Sprintf("%s %s — first: %s: %s", c.Problem, where, c.Scenarios[0], why)
		}
		return fmt.Sprintf("%s %s — first: %s", c.Problem, where, c.Scenarios[0])
	}
	if c.Wording {
		return fmt.Sprintf("%s differs from the reference's wording %s — %s; first: %s: %s", c.Field, where, wordingNote, c.Scenarios[0], c.First)
	}
	gov := "its decisions are the scenarios'"
	if len(c.Decisions) > 0 {
		gov = strings.Join(c.Decisions, ", ")
	}
	if c.Observed {
		return fmt.Sprintf("%s: the trajectory disagrees with what the implementation sent %s — %s; first: %s: %s", c.Field, where, gov, c.Scenarios[0], c.First)
	}
	return fmt.Sprintf("%s differs %s — %s; first: %s: %s", c.Field, where, gov, c.Scenarios[0], c.First)
}

// Causes groups the failures of failing rows (not known failing ones) by
// field pattern, with the decisions that govern the field rather than the
// scenarios', largest group first. Problems that are not about a field
// are grouped by their oracle's sentence up to the first colon.
func Causes(r *Report) []Cause {
	byKey := map[string]*Cause{}
	var order []string
	for _, row := range r.Sorted() {
		if row.Verdict != Fail {
			continue
		}
		seen := map[string]bool{}
		for _, l := range Lines(row) {
			var key string
			c := Cause{}
			switch {
			case len(l.Decisions) > 0 && slices.Contains(l.Oracles, "observed"):
				c.Field = trajectories.Pattern(l.Path)
				c.Decisions = l.Decisions
				c.Observed = true
				key = "observed " + c.Field
			case l.Wording:
				c.Field = trajectories.Pattern(l.Path)
				c.Wording = true
				key = "wording " + c.Field
			case l.Path != "":
				c.Field = trajectories.Pattern(l.Path)
				c.Decisions = trajectories.FieldDecisions(l.Path)
				key = "field " + c.Field
			default:
				c.Problem = problemKind(l.Statement)
				key = "problem " + c.Problem
			}
			if seen[key] {
				continue
			}
			seen[key] = true
			if byKey[key] == nil {
				c.First = l.Sentence()
				byKey[key] = &c
				order = append(order, key)
			}
			byKey[key].Scenarios = append(byKey[key].Scenarios, row.Scenario)
		}
	}
	out := make([]Cause, 0, len(order))
	for _, k := range order {
		out = append(out, *byKey[k])
	}
	slices.SortStableFunc(out, func(a, b Cause) int { return len(b.Scenarios) - len(a.Scenarios) })
	return out
}

// problemKind keeps the general part of a run-level sentence ("timed out
// after 10s (--timeout)") so that the same failure groups across
// scenarios whatever details follow: the text before the first ": "
// outside parentheses, so a label never opens one it does not close.
func problemKind(s string) string {
	depth := 0
	for i, r := range s {
		switch r {
		case '(':
			depth++
		case ')':
			depth = max(depth-1, 0)
		case ':':
			if depth == 0 && strings.HasPrefix(s[i:], ": ") && i > 0 {
				return s[:i]
			}
		}
	}
	return s
}

// Sentence renders the line for people: a field's wanted and actual
// values described in words (a tool call of search, 3 messages, the end
// goal_reached_by_tool) rather than as JSON, which the row's details keep.
func (l Line) Sentence() string {
	if l.Wording {
		return fmt.Sprintf("%s: the reference's wording is %s, this implementation's %s (%s; %s)", l.Path, Describe(l.Want), Describe(l.Got), strings.Join(l.Oracles, " and "), wordingNote)
	}
	if l.Path == "" || (l.Want == nil && l.Got == nil) {
		return l.String()
	}
	return fmt.Sprintf("%s: want %s, got %s (%s)", l.Path, Describe(l.Want), Describe(l.Got), strings.Join(l.Oracles, " and "))
}
