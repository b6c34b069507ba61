// Package kernel is an example Go PolyLoop kernel wired to the suite
// through polyloopkit: one RunFunc serves both `go test` (kernel_test.go,
// through polylooptest) and the stdio protocol (cmd/polyloop-go-example,
// through polyloopkit.Main).
//
// The kernel itself is the suite's reference (reference/), adapted to the
// kit by polyloopkit/refkernel: Run below is where a team's own kernel
// goes. It builds the kernel from spec (tools, definition, requests,
// faults), calls the model, handlers and project executor through seams,
// reports journal points around each journal write, and returns the
// trajectory.
package kernel

import (
	"context"

	"github.com/polyloop/polyloop-conform/polyloopkit"
	"github.com/polyloop/polyloop-conform/polyloopkit/refkernel"
	"github.com/polyloop/polyloop-conform/reference/tools"
	"github.com/polyloop/polyloop-conform/trajectories"
)

// New returns the kernel as the suite sees it: its hello and its RunFunc.
func New() polyloopkit.Kernel {
	schemas := &tools.SchemaCache{}
	return polyloopkit.Kernel{
		Name:         "polyloop-go-example",
		Version:      "0.1.0",
		SpecVersion:  "design-2026-12",
		Capabilities: polyloopkit.AllCapabilities(),
		Run: func(ctx context.Context, spec polyloopkit.Spec, seams *polyloopkit.Seams) (*trajectories.Trajectory, error) {
			return refkernel.Run(ctx, spec, seams, schemas)
		},
	}
}
