package engine

import (
	"regexp"
	"slices"
)

// judgedBy maps a capability to the trajectory fields only an
// implementation claiming it is judged on. A capability that a scenario
// needs as a whole (resume, cancellation, code-actions, project-executor)
// is not here: such a scenario is skipped. These two are parts of every
// scenario, so a kernel that starts without them would otherwise fail
// scenarios about something else (docs/implementing.md, "Stages").
var judgedBy = []struct {
	capability string
	fields     string // for people
	path       *regexp.Regexp
}{
	{"events", "events, event_sink_failures", regexp.MustCompile(`^(events|event_types|event_sink_failures)(\[|\.|$)`)},
	{"context-assembly", "steps[].model_input, steps[].context_size", regexp.MustCompile(`^steps\[\d+\]\.(model_input|context_size)(\[|\.|$)`)},
}

// Unjudged lists the capabilities (and their fields) an implementation
// that does not claim them is not judged on, in every scenario.
func Unjudged(claimed []string) map[string]string {
	out := map[string]string{}
	for _, j := range judgedBy {
		if !slices.Contains(claimed, j.capability) {
			out[j.capability] = j.fields
		}
	}
	return out
}

// dropUnclaimed removes the problems about fields of capabilities the
// implementation does not claim, and says which capabilities had some:
// what it does not claim is neither run nor judged.
func dropUnclaimed(problems []Problem, claimed []string) (kept []Problem, dropped []string) {
	for _, p := range problems {
		drop := ""
		for _, j := range judgedBy {
			if !slices.Contains(claimed, j.capability) && j.path.MatchString(p.Path) {
				drop = j.capability
				break
			}
		}
		if drop == "" {
			kept = append(kept, p)
		} else if !slices.Contains(dropped, drop) {
			dropped = append(dropped, drop)
		}
	}
	slices.Sort(dropped)
	return kept, dropped
}
