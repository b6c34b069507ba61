// Package markdown splits a Markdown document into the sections that start
// at matching headings, for every reader of a heading-structured document
// (the design records, the upstream design documents).
package markdown

import (
	"bufio"
	"bytes"
	"regexp"
)

// MaxLine bounds one line of a document.
const MaxLine = 4 << 20

// Section is a part of a document that starts at a heading.
type Section struct {
	Match []string // the heading's submatches of the start pattern
	Line  int      // the heading's line, from 1
	Lines []string // the heading and the lines under it, without line ends
}

// Sections returns the sections of data whose heading matches start, in
// document order. A section runs up to the next heading that start matches
// or that ends reports as ending it; lines outside every section are left
// out. Lines are split as bufio.ScanLines splits them (a trailing \r is
// dropped).
func Sections(data []byte, start *regexp.Regexp, ends func(line string) bool) ([]Section, error) {
	var out []Section
	var cur *Section
	flush := func() {
		if cur != nil {
			out = append(out, *cur)
			cur = nil
		}
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), MaxLine)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if m := start.FindStringSubmatch(line); m != nil {
			flush()
			cur = &Section{Match: m, Line: n, Lines: []string{line}}
			continue
		}
		if ends(line) {
			flush()
			continue
		}
		if cur != nil {
			cur.Lines = append(cur.Lines, line)
		}
	}
	flush()
	return out, sc.Err()
}
