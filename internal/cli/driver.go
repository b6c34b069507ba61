package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/polyloop/polyloop-conform/internal/engine"
	"github.com/polyloop/polyloop-conform/internal/implproc"
	"github.com/polyloop/polyloop-conform/internal/isolate"
	"github.com/polyloop/polyloop-conform/internal/refdriver"
	"github.com/polyloop/polyloop-conform/reference/tools"
)

// driverConfig says which implementation to drive and how.
type driverConfig struct {
	impl        string // "" for the in-process reference
	transcripts string // directory for --transcripts
	logs        io.Writer
	handshake   time.Duration
	trace       bool     // keep each scenario's exchange for --trace
	fresh       bool     // a new process for every scenario (--repeat)
	noFork      bool     // no fork server even when offered (--no-fork)
	carry       []string // directories every machine carries (--carry)
	volumes     []string // directories every machine carries as the runner's own (a recorder's mount)
	// syncs is told of every syncfs and sync an implementation process
	// makes (a recorder's: the kernel never sends them to FUSE).
	syncs func(isolate.SyncCall)
}

// carryFlag collects repeated --carry directories: each is bound into
// every machine the runner starts (internal/isolate), for a team's own
// instruments (a start log, a counter, coverage). State crosses from
// process to process through them, so every machine is then reported
// without its own files and --require observed fails its resumes.
type carryFlag []string

func (f *carryFlag) String() string { return strings.Join(*f, ",") }
func (f *carryFlag) Set(v string) error {
	abs, err := filepath.Abs(v)
	if err != nil {
		return err
	}
	if info, err := os.Stat(abs); err != nil || !info.IsDir() {
		return fmt.Errorf("%q is not a directory: --carry binds an existing directory into every machine", v)
	}
	*f = append(*f, abs)
	return nil
}

const carryUsage = "bind `DIR` (repeatable) into every machine the runner starts, for the implementation's own instruments; state then crosses processes, so resumes are reported without their own files (docs/limits.md, Isolation)"

// newDriver returns the in-process reference when impl is empty, and a
// subprocess driver otherwise. The command line runs as /bin/sh -c IMPL in
// a process group of its own, so it may be any shell command: "cd dir &&
// ./impl", "VAR=1 impl", ". venv/bin/activate; python3 -m impl".
func newDriver(ctx context.Context, cfg driverConfig) (engine.Driver, func(), error) {
	if cfg.impl == "" {
		if cfg.transcripts != "" {
			return nil, nil, fmt.Errorf("--transcripts records the protocol exchange, so it needs --impl")
		}
		return refdriver.Driver{Schemas: &tools.SchemaCache{}}, func() {}, nil
	}
	impl := cfg.impl
	c := &implproc.Client{
		Command:          func() *exec.Cmd { return exec.Command("/bin/sh", "-c", impl) },
		Logs:             cfg.logs,
		Transcripts:      cfg.transcripts,
		HandshakeTimeout: cfg.handshake,
		Trace:            cfg.trace,
		Fresh:            cfg.fresh,
		NoFork:           cfg.noFork,
		Shared:           cfg.carry,
		Carry:            cfg.volumes,
		Syncs:            cfg.syncs,
	}
	if err := c.Start(ctx); err != nil {
		return nil, nil, fmt.Errorf("--impl %q: %w", impl, err)
	}
	return c, c.Close, nil
}

// checkImplFlag refuses an --impl that was given but is blank: leaving
// it out means the built-in reference, and an empty value from an unset
// shell variable (--impl "$IMPL") must not quietly test that instead.
func checkImplFlag(fs *flag.FlagSet) error {
	var err error
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "impl" && strings.TrimSpace(f.Value.String()) == "" {
			err = fmt.Errorf("--impl %q: an empty command line; give the implementation's command, or leave --impl out to test the built-in reference", f.Value.String())
		}
	})
	return err
}
