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

// entry is one format of a registry: its name, its writer, and a few
// words for the flag's help.
type entry[W any] struct {
	name  string
	write W
	what  string
}

// registry is a list of formats. Every command validates its --format
// against a registry and dispatches through it, so a format name is
// checked in one place.
type registry[W any] []entry[W]

func (r registry[W]) names() []string {
	out := make([]string, len(r))
	for i, f := range r {
		out[i] = f.name
	}
	return out
}

func (r registry[W]) lookup(name string) (W, error) {
	for _, f := range r {
		if f.name == name {
			return f.write, nil
		}
	}
	var zero W
	return zero, fmt.Errorf("--format %q: choose %s", name, strings.Join(r.names(), ", "))
}

func (r registry[W]) usage(what string) string {
	parts := make([]string, len(r))
	for i, f := range r {
		parts[i] = f.name + " (" + f.what + ")"
	}
	return what + " format: " + strings.Join(parts, ", ")
}

// formats is the registry of run reports.
func formats() registry[Writer] {
	return registry[Writer]{
		{"text", Text, "for people: causes first, then each failure, then totals"},
		{"json", JSON, "for tools: " + FormatVersion},
		{"junit", JUnit, "for CI systems: one testsuite per family"},
		{"html", HTML, "one self-contained page"},
	}
}

// Names lists the report format names.
func Names() []string { return formats().names() }

// Lookup returns the writer of a report format, or an error naming the
// formats.
func Lookup(name string) (Writer, error) { return formats().lookup(name) }

// Usage is the --format flag's help text for reports.
func Usage() string { return formats().usage("report") }

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
