// Package knownfail reads known-failing lists: one glob pattern over
// scenario IDs per line, each with a required reason after "#".
//
//	# comments and blank lines are ignored
//	parse.*            # our parser does not unfence yet (issue 12)
//	resume.never-*     # resume is not implemented
//
// A listed scenario that passes is a stale entry, and so is a pattern that
// matches no scenario: both fail the run, so the list shrinks as an
// implementation improves.
package knownfail

import (
	"bufio"
	"bytes"
	"fmt"
	"path"
	"strings"
)

// Entry is one pattern with its reason.
type Entry struct {
	Pattern string
	Reason  string
	Line    int
}

// List is a parsed known-failing file.
type List struct {
	File    string
	Entries []Entry
}

// Parse reads a known-failing file; every error names file:line.
func Parse(name string, data []byte) (*List, error) {
	l := &List{File: name}
	sc := bufio.NewScanner(bytes.NewReader(data))
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		pat, reason, found := strings.Cut(line, "#")
		pat, reason = strings.TrimSpace(pat), strings.TrimSpace(reason)
		if !found || reason == "" {
			return nil, fmt.Errorf("%s:%d: %q has no reason; write it as `%s  # why it fails`", name, n, pat, pat)
		}
		if strings.ContainsAny(pat, " \t") {
			return nil, fmt.Errorf("%s:%d: %q holds white space; put one pattern per line", name, n, pat)
		}
		if _, err := path.Match(pat, ""); err != nil {
			return nil, fmt.Errorf("%s:%d: %q is not a valid glob: %v", name, n, pat, err)
		}
		l.Entries = append(l.Entries, Entry{Pattern: pat, Reason: reason, Line: n})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return l, nil
}

// Match returns the first entry matching id.
func (l *List) Match(id string) (Entry, bool) {
	if l == nil {
		return Entry{}, false
	}
	for _, e := range l.Entries {
		if ok, _ := path.Match(e.Pattern, id); ok {
			return e, true
		}
	}
	return Entry{}, false
}

// Unmatched returns entries that match none of ids.
func (l *List) Unmatched(ids []string) []Entry {
	if l == nil {
		return nil
	}
	var out []Entry
	for _, e := range l.Entries {
		hit := false
		for _, id := range ids {
			if ok, _ := path.Match(e.Pattern, id); ok {
				hit = true
				break
			}
		}
		if !hit {
			out = append(out, e)
		}
	}
	return out
}

// Everything returns the entries that match every one of ids (when there
// are more than one): a list that excuses the whole suite turns any
// implementation, even one that runs nothing, into a green run.
func (l *List) Everything(ids []string) []Entry {
	if l == nil || len(ids) < 2 {
		return nil
	}
	var out []Entry
	for _, e := range l.Entries {
		all := true
		for _, id := range ids {
			if ok, _ := path.Match(e.Pattern, id); !ok {
				all = false
				break
			}
		}
		if all {
			out = append(out, e)
		}
	}
	return out
}
