package docs_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/polyloop/polyloop-conform/internal/cli"
	"github.com/polyloop/polyloop-conform/internal/docgen"
	"github.com/polyloop/polyloop-conform/internal/generate"
	"github.com/polyloop/polyloop-conform/internal/protocol"
	"github.com/polyloop/polyloop-conform/reference/action"
	"github.com/polyloop/polyloop-conform/reference/journal"
	"github.com/polyloop/polyloop-conform/scenarios"
	"github.com/polyloop/polyloop-conform/trajectories"
)

// mib writes a byte count the way the docs do.
func mib(n int) string { return fmt.Sprintf("%d MiB", n>>20) }

// page reads a page with its lines joined, so a sentence wrapped over
// two lines still matches.
func page(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(strings.Fields(string(data)), " ")
}

// row returns the docs/limits.md table row that starts with name.
func row(t *testing.T, s, name string) string {
	t.Helper()
	i := strings.Index(s, "| "+name+" |")
	if i < 0 {
		t.Fatalf("docs/limits.md has no row %q", name)
	}
	j := strings.Index(s[i+2:], " | | ")
	if j < 0 {
		j = len(s) - i - 2
	}
	return s[i : i+2+j]
}

// TestLimitsInDocs holds the limits docs/limits.md quotes to the Go
// constants and flag defaults that set them.
func TestLimitsInDocs(t *testing.T) {
	s := page(t, "limits.md")
	runHelp := flagDefaults(t, "run")
	checks := []struct{ row, want string }{
		{"scenario file", mib(scenarios.MaxFileBytes)},
		{"trajectory file (`verify`, `diff`, `validate`)", mib(trajectories.MaxBytes)},
		{"model output parsed as an action", mib(action.MaxOutputBytes)},
		{"model output parsed as an action", fmt.Sprintf("JSON nesting %d levels", action.MaxDepth)},
		{"journal record", mib(journal.MaxRecordBytes)},
		{"protocol line", mib(protocol.MaxLineBytes)},
		{"one scenario, from its `run` message to its `result` (a crash scenario's resume included)", strings.TrimSuffix(runHelp["timeout"], "s") + " s"},
		{"a new implementation process's `hello` (the first, and each replacement after a crash, a kill or a resume)", strings.TrimSuffix(runHelp["handshake-timeout"], "s") + " s"},
	}
	for _, c := range checks {
		if r := row(t, s, c.row); !strings.Contains(r, c.want) {
			t.Errorf("docs/limits.md, row %q: want %q (the constant or flag default), the row says %s", c.row, c.want, r)
		}
	}
	if !strings.Contains(page(t, "protocol.md"), "A line is at most "+mib(protocol.MaxLineBytes)) {
		t.Errorf("docs/protocol.md does not say a line is at most %s (protocol.MaxLineBytes)", mib(protocol.MaxLineBytes))
	}
	if !strings.Contains(page(t, "implementing.md"), fmt.Sprintf("%s bytes", docgen.Thousands(action.MaxOutputBytes))) {
		t.Errorf("docs/implementing.md's guesses table does not say %s bytes (action.MaxOutputBytes)", docgen.Thousands(action.MaxOutputBytes))
	}
}

// flagDefaults returns a command's flags and their defaults from its -h.
func flagDefaults(t *testing.T, cmd string) map[string]string {
	t.Helper()
	var out bytes.Buffer
	cli.Main(context.Background(), []string{cmd, "-h"}, strings.NewReader(""), &out, &out)
	got := map[string]string{}
	re := regexp.MustCompile(`(?m)^\s+-([a-z-]+)[^\n]*\n(?:\s{4,}[^\n]*\n)*?[^\n]*\(default ([^)]+)\)`)
	for _, m := range re.FindAllStringSubmatch(out.String(), -1) {
		got[m[1]] = m[2]
	}
	if got["timeout"] == "" {
		t.Fatalf("%s -h shows no default for --timeout:\n%s", cmd, out.String())
	}
	return got
}

// TestExitCodesInDocs holds the exit codes README.md and docs/limits.md
// quote to internal/cli's.
func TestExitCodesInDocs(t *testing.T) {
	readme := page(t, "../README.md")
	want := fmt.Sprintf("Exit codes: %d all passed", cli.ExitOK)
	for _, w := range []string{want, fmt.Sprintf("%d something failed, %d the run could not start, %d/%d stopped by SIGINT/SIGTERM", cli.ExitFail, cli.ExitSetup, 128+int(syscall.SIGINT), 128+int(syscall.SIGTERM))} {
		if !strings.Contains(readme, w) {
			t.Errorf("README.md does not say %q (internal/cli's exit codes)", w)
		}
	}
	if w := fmt.Sprintf("exit %d (SIGINT) or %d (SIGTERM)", 128+int(syscall.SIGINT), 128+int(syscall.SIGTERM)); !strings.Contains(page(t, "limits.md"), w) {
		t.Errorf("docs/limits.md does not say %q", w)
	}
	if w := fmt.Sprintf("set-up error (exit code %d)", cli.ExitSetup); !strings.Contains(page(t, "protocol.md"), w) {
		t.Errorf("docs/protocol.md does not say %q", w)
	}
}

// TestGenerateDefaultsInDocs holds the generated batch's size and the
// number of differences it shrinks, as README.md and docs/generate.md
// quote them, to internal/generate's constants.
func TestGenerateDefaultsInDocs(t *testing.T) {
	for _, c := range []struct{ file, want string }{
		{"../README.md", fmt.Sprintf("suite ends with %d cases generated", generate.BatchCount)},
		{"generate.md", fmt.Sprintf("built-in reference on %d generated cases", generate.BatchCount)},
		{"generate.md", fmt.Sprintf("compares N cases instead of %d", generate.BatchCount)},
		{"generate.md", fmt.Sprintf("default batch (%d cases)", generate.BatchCount)},
		{"generate.md", fmt.Sprintf("The first %d differences are shrunk", generate.BatchShrunk)},
	} {
		if !strings.Contains(page(t, c.file), c.want) {
			t.Errorf("%s does not say %q (internal/generate)", c.file, c.want)
		}
	}
}
