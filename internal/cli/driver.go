package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/polyloop/polyloop-conform/internal/engine"
)

// newDriver returns the in-process reference when impl is empty, and a
// subprocess driver otherwise.
func newDriver(ctx context.Context, impl, transcripts string, logs io.Writer) (engine.Driver, func(), error) {
	if impl == "" {
		if transcripts != "" {
			return nil, nil, fmt.Errorf("--transcripts records the protocol exchange, so it needs --impl")
		}
		return engine.Reference{}, func() {}, nil
	}
	return nil, nil, fmt.Errorf("--impl: subprocess implementations are not supported by this build yet")
}
