// Package polyloopkit is the implementation side of polyloop-conform's
// stdio protocol (docs/protocol.md) for a PolyLoop kernel written in Go:
// the handshake, the message loop, numbering calls and matching their
// answers, the runner's cancel as the end of the run's context.Context,
// released calls, journal points, the runner's audit sink and size
// measure, and a fork server. A kernel needs one function, a RunFunc,
// which builds the kernel from a scenario's Spec, runs it against the
// Seams (the scenario's model, handlers, project executor, sink, measure
// and journal points, scripted by the runner) and returns its trajectory.
//
// The same Kernel value serves both ways of being judged: Main speaks the
// protocol on stdin and stdout, for `polyloop-conform run --impl CMD`;
// package polylooptest runs the suite in process from the team's own
// `go test`, through Serve on in-memory pipes. The typed messages follow
// docs/protocol.schema.json shape for shape, and a test holds them to it.
package polyloopkit

import (
	"context"
	"slices"

	"github.com/polyloop/polyloop-conform/trajectories"
)

// ProtocolVersion is the version of the stdio protocol the kit speaks.
const ProtocolVersion = 1

// maxLineBytes is the longest line either side may write (docs/limits.md).
const maxLineBytes = 16 << 20

// RunFunc runs one scenario: it builds the kernel from spec, runs it (or,
// when seams.Resume, resumes seams.JournalDir) against seams, and returns
// the trajectory in polyloop.trajectory/v1. ctx ends when the runner
// cancels the run (context.Canceled) or lets its deadline pass
// (context.DeadlineExceeded): a cancelled run is still a trajectory (end
// null, interrupted set), not an error. An error means the kernel itself
// broke; the scenario then fails with its text.
type RunFunc func(ctx context.Context, spec Spec, seams *Seams) (*trajectories.Trajectory, error)

// Kernel is a Go PolyLoop kernel as the suite sees it: what its hello
// says and the function that runs a scenario.
type Kernel struct {
	// Name and Version identify the implementation in reports; Name must
	// not be empty.
	Name    string
	Version string
	// SpecVersion names the design the kernel follows.
	SpecVersion string
	// Capabilities are the capabilities and protocol options the kernel
	// claims (docs/protocol.md, "Handshake"); nil claims none. Claim only
	// what the kernel does: what is not claimed is neither run nor judged.
	Capabilities []string
	// Run runs one scenario.
	Run RunFunc
	// NoForkServer keeps Main from offering the fork server (a pool of
	// pre-started workers: see Main).
	NoForkServer bool
}

// AllCapabilities returns the seven scenario capabilities and the three
// protocol options a complete kernel claims (not fork-server, which Main
// adds itself).
func AllCapabilities() []string {
	return []string{"json-actions", "code-actions", "resume", "cancellation", "context-assembly", "events", "project-executor",
		"wire-sink", "wire-measure", "journal-lines"}
}

// hello is the kernel's answer to the runner's hello.
func (k Kernel) hello(forkServer bool) Hello {
	caps := slices.Clone(k.Capabilities)
	if caps == nil {
		caps = []string{}
	}
	if forkServer && !slices.Contains(caps, "fork-server") {
		caps = append(caps, "fork-server")
	}
	version := k.Version
	if version == "" {
		version = "0"
	}
	return Hello{Type: "hello", Protocol: ProtocolVersion, Name: k.Name, Version: version, SpecVersion: k.SpecVersion, Capabilities: caps}
}
