package polyloopkit_test

import (
	"context"

	"github.com/polyloop/polyloop-conform/polyloopkit"
	"github.com/polyloop/polyloop-conform/trajectories"
)

// A kernel's main: the one function that runs a scenario, and its hello.
func ExampleMain() {
	polyloopkit.Main(polyloopkit.Kernel{
		Name:         "my-kernel",
		Version:      "1.2.0",
		Capabilities: []string{"json-actions", "context-assembly"},
		Run: func(ctx context.Context, spec polyloopkit.Spec, seams *polyloopkit.Seams) (*trajectories.Trajectory, error) {
			tr := &trajectories.Trajectory{Format: trajectories.Format, Scenario: spec.Scenario}
			// Build the kernel from spec, run spec.Requests[0] with
			// seams.Model as its model and seams.Handler behind each tool
			// whose seams.HasHandler, and record each step in tr.
			return tr, nil
		},
	})
}
