package report

import (
	"fmt"
	"io"
	"strings"
)

// Options change how a report is written.
type Options struct {
	// Brief writes the causes and the totals only (text).
	Brief bool
	// Trace writes each failing scenario's protocol exchange and stderr
	// under it (text; the other formats always carry what the rows hold).
	Trace bool
}

// Writer writes a report in one format.
type Writer func(w io.Writer, r *Report, o Options) error

// format is one entry of the registry.
type format struct {
	name  string
	write Writer
	what  string
}

// formats is the registry: every command that writes a report validates
// its --format against it and dispatches through it.
func formats() []format {
	return []format{
		{"text", Text, "for people: causes first, then each failure, then totals"},
		{"json", JSON, "for tools: " + FormatVersion},
		{"junit", JUnit, "for CI systems: one testsuite per family"},
		{"html", HTML, "one self-contained page"},
	}
}

// Names lists the format names.
func Names() []string {
	var out []string
	for _, f := range formats() {
		out = append(out, f.name)
	}
	return out
}

// Lookup returns the writer of a format, or an error naming the formats.
func Lookup(name string) (Writer, error) {
	for _, f := range formats() {
		if f.name == name {
			return f.write, nil
		}
	}
	return nil, fmt.Errorf("--format %q: choose %s", name, strings.Join(Names(), ", "))
}

// Usage is the --format flag's help text.
func Usage() string {
	var parts []string
	for _, f := range formats() {
		parts = append(parts, f.name+" ("+f.what+")")
	}
	return "report format: " + strings.Join(parts, ", ")
}

// errWriter keeps the first write error, so a report written with many
// Fprintf calls fails as a whole when its destination does.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}
