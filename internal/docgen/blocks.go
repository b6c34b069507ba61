// Package docgen keeps the figures the documentation quotes true: every
// count in docs/*.md and README.md that the tool can compute lives in a
// generated block,
//
//	<!-- generated: NAME -->
//	…text the generator NAME writes…
//	<!-- end generated -->
//
// and Refresh recomputes each block from its generator in the registry
// (Generators), reporting or rewriting the stale ones. One command
// refreshes them all: Command.
package docgen

import (
	"fmt"
	"regexp"
	"strings"
)

// Command is the one command that rewrites every generated block; a
// stale block's message names it.
const Command = "go test ./docs -run TestGeneratedBlocks -args -update"

// EndMarker closes a generated block.
const EndMarker = "<!-- end generated -->"

var beginMarker = regexp.MustCompile(`^<!-- generated: ([a-z][a-z0-9-]*) -->$`)

// Block is one generated block of a document.
type Block struct {
	Name string // the generator's name
	Line int    // the line of the begin marker, from 1
	// Start and End are the byte offsets of the block's text: from the
	// line after the begin marker up to the end marker's line.
	Start, End int
}

// Text is the block's current text in data.
func (b Block) Text(data []byte) string { return string(data[b.Start:b.End]) }

// Blocks returns the generated blocks of a document in order. A begin
// marker without its end, an end without a begin, a block inside a block
// or a marker line that does not parse is an error naming file:line.
func Blocks(file string, data []byte) ([]Block, error) {
	var out []Block
	var open *Block
	off := 0
	for n, line := range strings.SplitAfter(string(data), "\n") {
		next := off + len(line)
		trimmed := strings.TrimRight(line, "\r\n")
		switch {
		case strings.HasPrefix(trimmed, "<!-- generated:"):
			m := beginMarker.FindStringSubmatch(trimmed)
			if m == nil {
				return nil, fmt.Errorf("%s:%d: a generated block's marker reads <!-- generated: NAME --> with a lower-case NAME, not %q", file, n+1, trimmed)
			}
			if open != nil {
				return nil, fmt.Errorf("%s:%d: block %q starts inside block %q (line %d); close it with %s first", file, n+1, m[1], open.Name, open.Line, EndMarker)
			}
			open = &Block{Name: m[1], Line: n + 1, Start: next}
		case trimmed == EndMarker:
			if open == nil {
				return nil, fmt.Errorf("%s:%d: %s without a <!-- generated: NAME --> above it", file, n+1, EndMarker)
			}
			open.End = off
			out = append(out, *open)
			open = nil
		}
		off = next
	}
	if open != nil {
		return nil, fmt.Errorf("%s:%d: block %q has no %s", file, open.Line, open.Name, EndMarker)
	}
	return out, nil
}

// Replace returns data with each block's text replaced by texts[i]
// (blocks as Blocks returned them, in order).
func Replace(data []byte, blocks []Block, texts []string) []byte {
	var b strings.Builder
	at := 0
	for i, bl := range blocks {
		b.Write(data[at:bl.Start])
		b.WriteString(texts[i])
		at = bl.End
	}
	b.Write(data[at:])
	return []byte(b.String())
}
