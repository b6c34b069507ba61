package polylooptest

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/polyloop/polyloop-conform/docs"
	"github.com/polyloop/polyloop-conform/internal/atomicfile"
	"github.com/polyloop/polyloop-conform/internal/knownfail"
	"github.com/polyloop/polyloop-conform/internal/protocol"
	"github.com/polyloop/polyloop-conform/internal/report"
	"github.com/polyloop/polyloop-conform/internal/suiteversion"
)

// An Option changes how Run and RunCommand judge.
type Option func(*config) error

type config struct {
	known        *knownfail.List
	capabilities []string
	since        *suiteversion.Changes
	format       string
	out          string
	write        report.Writer
	strict       bool
	timeout      time.Duration
	requireNone  bool
	// only, when set, runs the scenarios it accepts and no other: this
	// package's own tests judge a slice, as go test ./... must stay cheap.
	only func(id string) bool
}

func configure(opts []Option) (*config, error) {
	c := &config{}
	for _, o := range opts {
		if err := o(c); err != nil {
			return nil, fmt.Errorf("polylooptest: %w", err)
		}
	}
	return c, nil
}

// KnownFailing reads a known-failing list, the file `run --known-failing`
// reads: one glob over scenario IDs per line, each with a `# reason`. A
// listed scenario that fails is skipped with its reason; one that passes,
// or a pattern that matches no scenario, fails the test, so the list
// only shrinks.
func KnownFailing(file string) Option {
	return func(c *config) error {
		data, err := os.ReadFile(file)
		if err != nil {
			return fmt.Errorf("KnownFailing: %w", err)
		}
		c.known, err = knownfail.Parse(file, data)
		return err
	}
}

// Capabilities fails the test unless the kernel claims every one of these
// capabilities and protocol options (`run --capabilities`): a release
// that stops claiming one would otherwise turn its scenarios into skips.
func Capabilities(names ...string) Option {
	return func(c *config) error {
		for _, n := range names {
			if !protocol.KnownCapability(n) {
				return fmt.Errorf("Capabilities: %q is no capability or protocol option; known: %s", n, strings.Join(protocol.CapabilityNames(), ", "))
			}
		}
		c.capabilities = append(c.capabilities, names...)
		return nil
	}
}

// Since marks each failure with what moved since that suite version (`run
// --since`, docs/versioning.md): its scenario new or changed, or a
// decision it cites new or changed; "unchanged" means the kernel moved.
func Since(version string) Option {
	return func(c *config) error {
		ms, err := suiteversion.Load(docs.Versions())
		if err != nil {
			return err
		}
		old, err := suiteversion.Find(ms, version)
		if err != nil {
			return fmt.Errorf("Since: %w", err)
		}
		cur, err := suiteversion.Compute(suiteversion.Embedded(protocol.Version))
		if err != nil {
			return err
		}
		cur.Version = protocol.SuiteVersion
		moved := suiteversion.Diff(old, cur)
		c.since = &moved
		return nil
	}
}

// Report writes the whole run's report to file, atomically, in format
// text, json, junit or html (the CLI's `--format F --out FILE`), once
// every subtest has finished.
func Report(format, file string) Option {
	return func(c *config) error {
		w, err := report.Lookup(format)
		if err != nil {
			return fmt.Errorf("Report: %w", err)
		}
		if err := atomicfile.CheckOutput(file); err != nil {
			return fmt.Errorf("Report: %w", err)
		}
		c.format, c.out, c.write = format, file, w
		return nil
	}
}

// Strict compares the implementation's own sentences word for word as
// well (`run --strict`).
func Strict() Option {
	return func(c *config) error { c.strict = true; return nil }
}

// Timeout bounds each scenario; the default is 10 s (`run --timeout`).
func Timeout(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 {
			return fmt.Errorf("Timeout: %s is not a positive duration", d)
		}
		c.timeout = d
		return nil
	}
}

// RequireNone counts a pass that rests on the kernel's own word as a pass
// (`run --require none`); by default it fails, as under `run`. The
// report still lists such passes as self-reported.
func RequireNone() Option {
	return func(c *config) error { c.requireNone = true; return nil }
}
