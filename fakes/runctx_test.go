package fakes

import (
	"context"
	"errors"
	"testing"
)

func TestRunContext(t *testing.T) {
	for _, tc := range []struct {
		name string
		end  func(cancel, expire func(), parent context.CancelFunc)
		want error
	}{
		{"cancel", func(cancel, _ func(), _ context.CancelFunc) { cancel() }, context.Canceled},
		{"expire", func(_, expire func(), _ context.CancelFunc) { expire() }, context.DeadlineExceeded},
		{"parent", func(_, _ func(), parent context.CancelFunc) { parent() }, context.Canceled},
		{"first wins", func(cancel, expire func(), _ context.CancelFunc) { expire(); cancel() }, context.DeadlineExceeded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parent, stop := context.WithCancel(context.Background())
			defer stop()
			ctx, cancel, expire := RunContext(parent)
			child, childCancel := context.WithCancel(ctx)
			defer childCancel()
			if ctx.Err() != nil {
				t.Fatalf("Err before the end = %v", ctx.Err())
			}
			tc.end(cancel, expire, stop)
			<-child.Done()
			if !errors.Is(ctx.Err(), tc.want) || !errors.Is(child.Err(), tc.want) {
				t.Errorf("Err = %v, derived Err = %v; want %v for both", ctx.Err(), child.Err(), tc.want)
			}
		})
	}
}
