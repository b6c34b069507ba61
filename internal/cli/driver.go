package cli

import (
	"context"
	"fmt"
	"io"
	"os/exec"

	"github.com/polyloop/polyloop-conform/internal/engine"
	"github.com/polyloop/polyloop-conform/internal/protocol"
	"github.com/polyloop/polyloop-conform/reference/tools"
)

// newDriver returns the in-process reference when impl is empty, and a
// subprocess driver that starts impl through /bin/sh otherwise (so quoting
// works as in a shell).
func newDriver(ctx context.Context, impl, transcripts string, logs io.Writer) (engine.Driver, func(), error) {
	if impl == "" {
		if transcripts != "" {
			return nil, nil, fmt.Errorf("--transcripts records the protocol exchange, so it needs --impl")
		}
		return engine.Reference{Schemas: &tools.SchemaCache{}}, func() {}, nil
	}
	c := &protocol.Client{
		Command:     func() *exec.Cmd { return exec.Command("/bin/sh", "-c", "exec "+impl) },
		Logs:        logs,
		Transcripts: transcripts,
	}
	if err := c.Start(ctx); err != nil {
		return nil, nil, fmt.Errorf("--impl %q: %w", impl, err)
	}
	return c, c.Close, nil
}
