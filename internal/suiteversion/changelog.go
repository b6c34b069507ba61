package suiteversion

import (
	"fmt"
	"slices"
	"strings"
)

// UpdateCommand regenerates the current version's manifest and the
// changelog; BumpCommand starts the next version. Failures name them.
const (
	UpdateCommand = "go test ./internal/suiteversion -run TestManifest -args -update"
	BumpCommand   = "go test ./internal/suiteversion -run TestManifest -args -bump minor"
)

// Changelog renders CHANGELOG.md from the manifests (oldest first, as
// Load returns them), newest version first.
func Changelog(ms []*Manifest) string {
	var b strings.Builder
	b.WriteString("# Changelog\n\n")
	fmt.Fprintf(&b, "<!-- Generated from docs/versions/*.json by `%s`; do not edit by hand. -->\n\n", UpdateCommand)
	b.WriteString("What each suite version changed for an implementation: the decision records added or changed, and the\n" +
		"scenarios added or changed (their YAML, their golden trajectory, or both). docs/versioning.md says when\n" +
		"the version moves and what each kind of bump means. `polyloop-conform run --since VERSION` marks each\n" +
		"failure whose scenario or cited decision is new or changed since VERSION.\n")
	for i := len(ms) - 1; i >= 0; i-- {
		fmt.Fprintf(&b, "\n## %s\n\n", ms[i].Version)
		if i == 0 {
			writeFirst(&b, ms[0])
			continue
		}
		writeEntry(&b, Diff(ms[i-1], ms[i]))
	}
	return b.String()
}

func writeFirst(b *strings.Builder, m *Manifest) {
	fmt.Fprintf(b, "The first version with a manifest: %s, %s.", countScenarios(m), countDecisions(m))
	if m.Source != "" {
		fmt.Fprintf(b, " Reconstructed from %s.", m.Source)
	}
	b.WriteString("\n")
}

func countScenarios(m *Manifest) string {
	must := 0
	for _, s := range m.Scenarios {
		if s.Level == "MUST" {
			must++
		}
	}
	return fmt.Sprintf("%d scenarios (%d MUST)", len(m.Scenarios), must)
}

func countDecisions(m *Manifest) string {
	accepted := 0
	for _, d := range m.Decisions {
		if d.Status == "accepted" {
			accepted++
		}
	}
	return fmt.Sprintf("%d decision records (%d accepted)", len(m.Decisions), accepted)
}

// Entry is the changelog's entry for c, without its heading: what moved
// from c.From to c.To, and whether it breaks (polyloop-conform version
// --since prints it).
func Entry(c Changes) string {
	var b strings.Builder
	writeEntry(&b, c)
	return b.String()
}

func writeEntry(b *strings.Builder, c Changes) {
	switch r := Required(c.From, c); {
	case c.Empty():
		fmt.Fprintf(b, "Nothing an implementation is judged by moved since %s.\n", c.From)
		return
	case c.Breaking():
		fmt.Fprintf(b, "Breaking since %s (a %s bump): an implementation that passed %s may fail %s on a scenario or decision listed here.\n", c.From, r, c.From, c.To)
	default:
		fmt.Fprintf(b, "Not breaking since %s (a %s bump): scenarios or decisions were only removed.\n", c.From, r)
	}
	b.WriteString("\n")
	fmt.Fprintf(b, "- Decisions: %s.\n", tally(c.Decisions))
	fmt.Fprintf(b, "- Scenarios: %s.\n", tally(c.Scenarios))
	if len(c.Formats) > 0 {
		fmt.Fprintf(b, "- Formats changed: %s.\n", strings.Join(c.Formats, ", "))
	}
	if c.Protocol {
		b.WriteString("- The protocol's version number changed.\n")
	}
	for _, sec := range []struct {
		what   string
		list   []Change
		status Status
	}{
		{"Decisions new", c.Decisions, Added}, {"Decisions changed", c.Decisions, Changed}, {"Decisions removed", c.Decisions, Removed},
		{"Scenarios new", c.Scenarios, Added}, {"Scenarios changed", c.Scenarios, Changed}, {"Scenarios removed", c.Scenarios, Removed},
	} {
		rows := slices.DeleteFunc(slices.Clone(sec.list), func(ch Change) bool { return ch.Status != sec.status })
		if len(rows) == 0 {
			continue
		}
		fmt.Fprintf(b, "\n### %s (%d)\n\n", sec.what, len(rows))
		for _, ch := range rows {
			fmt.Fprintf(b, "- `%s` (%s) — %s", ch.ID, ch.Level, ch.Title)
			if ch.What != "" {
				fmt.Fprintf(b, " [%s]", ch.What)
			}
			b.WriteString("\n")
		}
	}
}

func tally(list []Change) string {
	n := map[Status]int{}
	for _, ch := range list {
		n[ch.Status]++
	}
	return fmt.Sprintf("%d new, %d changed, %d removed", n[Added], n[Changed], n[Removed])
}
