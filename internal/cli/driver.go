package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"

	"github.com/polyloop/polyloop-conform/internal/engine"
	"github.com/polyloop/polyloop-conform/internal/implproc"
	"github.com/polyloop/polyloop-conform/internal/refdriver"
	"github.com/polyloop/polyloop-conform/reference/tools"
)

// driverConfig says which implementation to drive and how.
type driverConfig struct {
	impl        string // "" for the in-process reference
	transcripts string // directory for --transcripts
	logs        io.Writer
	handshake   time.Duration
	trace       bool // keep each scenario's exchange for --trace
	fresh       bool // a new process for every scenario (--repeat)
	noFork      bool // no fork server even when offered (--no-fork)
}

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
