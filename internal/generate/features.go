package generate

import (
	"slices"
	"strings"
)

// A drawn case's features are the edges it was drawn at on purpose (a
// plan that is not a string, a duplicated name, a crash at a journal
// point), each with the decisions it exists for. A difference cites them
// beside the decisions of the fields that differ: a field such as
// steps[*].action is governed by the action format as a whole, and the
// feature says which part of it the case put to the test (issue 54: a
// kernel that refuses "plan": 3 differs on the action and the end, and
// breaks 0003.D5.parts, which neither field names).

// whyEmpty is what an empty or white-space output exists for.
var whyEmpty = []string{"0003.D7.empty", "0010.D2.turns"}

// whyBoundary is what each boundary shape of drawOutput exists for, in
// the order drawOutput lists them.
var whyBoundary = [][]string{
	{"0003.D5.parts"},                         // a plan that is not a string
	{"0003.D7.tool-name"},                     // an empty tool name
	{"0003.D6", "0003.D6.names"},              // a key beside arguments: drop_keys_beside_arguments
	{"0003.D6", "0003.D6.unfence-closing"},    // a bare fence
	{"0003.D6", "0003.D6.unfence-whitespace"}, // prose before a fence: no fence around the whole output
	{"0003.D7.empty", "0003.D6"},              // an empty fence
	{"0003.D7.lone-surrogate"},                // half a surrogate pair
}

// whyBelowTop is what a call valid at the top of its arguments and wrong
// inside them exists for.
var whyBelowTop = []string{"0006.D6.depth", "0006.D6.enum", "0006.D6.integer"}

// note records why an output text was drawn. Outputs are looked up by
// text, so shrinking, which drops outputs but never writes new ones,
// keeps the notes of those that remain.
func (s *spec) note(text string, why ...string) {
	if len(why) == 0 {
		return
	}
	if s.why == nil {
		s.why = map[string][]string{}
	}
	for _, d := range why {
		if !slices.Contains(s.why[text], d) {
			s.why[text] = append(s.why[text], d)
		}
	}
}

// outputFeatures are the decisions the outputs of the first upTo steps
// exist for (every output when upTo is 0): the outputs the run had
// settled when it diverged, since an output shapes the inputs after it.
func (s *spec) outputFeatures(upTo int) []string {
	outs := s.model
	if s.second != nil {
		outs = append(slices.Clone(s.model), s.second.model...)
	}
	if upTo > 0 && upTo < len(outs) {
		outs = outs[:upTo]
	}
	var out []string
	for _, o := range outs {
		out = appendNew(out, s.why[o]...)
	}
	return out
}

// caseFeatures are the decisions the case's own edges exist for: its
// registration, request, faults and phases.
func (s *spec) caseFeatures() []string {
	var out []string
	add := func(cond bool, ids ...string) {
		if cond {
			out = appendNew(out, ids...)
		}
	}
	names := map[string]int{}
	broken, noHandler, defaults := 0, 0, false
	for _, t := range s.tools {
		names[t.name]++
		if t.broken {
			broken++
		}
		if t.handler == nil {
			noHandler++
		}
		for _, p := range t.props {
			defaults = defaults || p.def != nil
			add(p.rich != nil, whyBelowTop...)
		}
		add(t.completes, "0004.D3", "0008.D4.constants")
		add(t.completes && slices.ContainsFunc(t.handler, func(b behaviour) bool { return b.kind == "error" }), "0004.D3.tool-error")
	}
	dups := 0
	for _, n := range names {
		if n > 1 {
			dups += n - 1
		}
	}
	add(dups > 0, "0006.D6.construction", "0006.D6.construction.order")
	add(dups > 1 || broken > 1, "0006.D6.construction.all")
	add(broken > 0, "0006.D6.construction", "0006.D6.compile")
	add(noHandler > 0, "0008.D2", "0008.D2.names")
	add(defaults, "0006.D6.no-defaults")
	add(s.eff < 1 || s.total < 1, "0004.D1.min")
	add(s.second != nil && (s.second.eff < 1 || s.second.total < 1), "0004.D1.min", "0003.D1")
	add(s.fullExec, "0006.D3", "0006.D3.same")
	add(s.visible != nil, "0006.D6", "0008.D1") // restrict_to, and the handlers that travel with it
	add(s.project != nil, "0003.D4", "0008.D4.validate")
	for _, o := range s.project {
		add(o.complete, "0006.D5", "0004.D3")
		add(o.complete && o.status != "EXECUTED", "0004.D3.env-not-executed")
	}
	add(s.code && s.project == nil, "0008.D4.no-tool-call")
	add(edged(s.runFragment) || edged(s.goal), "0003.D2")
	add(slices.ContainsFunc(s.visible, func(v string) bool { return names[v] == 0 }), "0006.D6")
	add(s.code, "0003.D5", "0003.D5.fence")
	add(s.unmeasured != "", "0010.D5", "0010.D5.probe")
	add(s.goal == s.runFragment && strings.TrimSpace(s.goal) != "", "0010.D5")
	add(s.template != "", "0010.D4")
	add(s.template != "" && !strings.Contains(s.template, "{observation}"), "0010.D4.spelling")
	add(len(s.injections) > 0, "0010.D3")
	add(blankText(s.runFragment) || blankText(s.goal), "0010.D2.whitespace")
	add(s.sink != "", "0011.D2", "0011.D2.count")
	add(s.crash != nil, "0002.D1", "0002.D2", "0002.D3", "0002.D4")
	add(s.torn || s.damage != "", "0002.D5")
	add(s.cancel != nil, "0004.D4", "0004.D4.release", "0008.D4.cancelled")
	add(s.cancel != nil && s.cancel.deadline, "0004.D4.deadline")
	add(s.cancel != nil && s.cancel.phase != "" || s.crash != nil && s.crash.phase != "", "0004.D4.phase")
	add(s.modelFail > 0, "0003.D3", "0003.D3.budget")
	add(s.second != nil, "0003.D1")
	return out
}

// edged is a text a careless port would normalise: white space at an
// edge, or several lines (the library never touches prompt text, 0003.D2).
func edged(t string) bool {
	return strings.TrimSpace(t) != t || strings.Contains(strings.TrimRight(t, "\n"), "\n")
}

// blankText is a text of white space only (not the empty one).
func blankText(t string) bool { return t != "" && strings.TrimSpace(t) == "" }

// appendNew appends the ids that out does not hold yet, in order.
func appendNew(out []string, ids ...string) []string {
	for _, id := range ids {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}
