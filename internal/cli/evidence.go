package cli

import (
	"flag"
	"fmt"
	"slices"
	"strings"

	"github.com/polyloop/polyloop-conform/internal/protocol"
	"github.com/polyloop/polyloop-conform/internal/report"
)

// requireNone is --require's opt-out: self-reported passes count as passes.
const requireNone = "none"

// evidenceFlags are run's demands on what a green rests on: the evidence
// each pass needs (--require) and the capabilities the implementation
// must claim (--capabilities).
type evidenceFlags struct {
	require      string
	capabilities string
}

func (e *evidenceFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&e.require, "require", string(report.Observed), "the evidence every pass needs: `observed` (the default: a pass that rests on the implementation's own word for a fault the runner could have played fails) or none (self-reported passes count; the report still lists them)")
	fs.StringVar(&e.capabilities, "capabilities", "", "fail unless the implementation claims every one of these comma-separated capabilities and protocol options (`LIST`, e.g. json-actions,resume,events,wire-sink)")
}

// check refuses a requirement or a capability name the runner does not know.
func (e *evidenceFlags) check() error {
	if e.require != string(report.Observed) && e.require != requireNone {
		return fmt.Errorf("--require %q: give observed (the default) or none", e.require)
	}
	for _, c := range e.expected() {
		if !protocol.KnownCapability(c) {
			return fmt.Errorf("--capabilities: %q is no capability or protocol option; known: %s", c, strings.Join(protocol.CapabilityNames(), ", "))
		}
	}
	return nil
}

func (e *evidenceFlags) expected() []string {
	if strings.TrimSpace(e.capabilities) == "" {
		return nil
	}
	out := strings.Split(e.capabilities, ",")
	for i := range out {
		out[i] = strings.TrimSpace(out[i])
	}
	return out
}

// apply records what the implementation claimed and what the run
// required, fails every self-reported pass unless --require none, and
// adds a run-level error naming each expected capability not claimed.
func (e *evidenceFlags) apply(rep *report.Report, claimed []string) {
	options := protocol.ProtocolOptions()
	rep.Claimed = &report.Claimed{Capabilities: []string{}}
	for _, c := range claimed {
		if slices.Contains(options, c) {
			rep.Claimed.Options = append(rep.Claimed.Options, c)
		} else {
			rep.Claimed.Capabilities = append(rep.Claimed.Capabilities, c)
		}
	}
	rep.Require = e.require
	if e.require == string(report.Observed) {
		report.RequireObserved(rep)
	}
	var missing []string
	for _, c := range e.expected() {
		if !slices.Contains(claimed, c) {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		rep.Errors = append(rep.Errors, fmt.Sprintf("the implementation does not claim %s, which --capabilities expects: its hello claims %s; a release that stops claiming a capability skips its scenarios, so the gate fails instead",
			strings.Join(missing, ", "), strings.Join(claimed, ", ")))
	}
}
