package suiteversion

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Status is what became of a scenario or decision between two versions.
type Status string

// The statuses; "" is an ID neither version has (a team's own scenario,
// a generated case).
const (
	Added     Status = "new"
	Changed   Status = "changed"
	Removed   Status = "removed"
	Unchanged Status = "unchanged"
)

// Change is one scenario or decision that moved.
type Change struct {
	ID, Title, Level string
	Status           Status
	// What changed, for a changed entry: "golden", "scenario",
	// "scenario and golden"; "text", "level", "status" for a decision.
	What string
}

// Changes are the moves from one manifest to another.
type Changes struct {
	From, To  string
	Scenarios []Change
	Decisions []Change
	// Formats lists the schema files whose hash changed (added or removed
	// ones included); Protocol is set when the protocol number moved.
	Formats  []string
	Protocol bool

	scenarios map[string]Status
	decisions map[string]Status
}

// Diff lists what moved from old to cur.
func Diff(old, cur *Manifest) Changes {
	c := Changes{From: old.Version, To: cur.Version, Protocol: old.Protocol != cur.Protocol,
		scenarios: map[string]Status{}, decisions: map[string]Status{}}
	diffEntries(&c, old.Scenarios, cur.Scenarios, c.scenarios, &c.Scenarios,
		func(s Scenario) (string, string) { return s.Title, s.Level },
		func(o, n Scenario) string {
			var what []string
			if o.YAML != n.YAML {
				what = append(what, "scenario")
			}
			if o.Golden != n.Golden {
				what = append(what, "golden")
			}
			return strings.Join(what, " and ")
		})
	diffEntries(&c, old.Decisions, cur.Decisions, c.decisions, &c.Decisions,
		func(d Decision) (string, string) { return d.Title, d.Level },
		func(o, n Decision) string {
			var what []string
			if o.Text != n.Text {
				what = append(what, "text")
			}
			if o.Level != n.Level {
				what = append(what, "level "+o.Level+" → "+n.Level)
			}
			if o.Status != n.Status {
				what = append(what, "status "+o.Status+" → "+n.Status)
			}
			return strings.Join(what, ", ")
		})
	for _, f := range union(old.Formats, cur.Formats) {
		if old.Formats[f] != cur.Formats[f] {
			c.Formats = append(c.Formats, f)
		}
	}
	return c
}

// diffEntries compares one kind of entry (scenarios or decisions): meta
// gives an entry's title and level, what names what differs between two
// versions of one ("" when nothing does).
func diffEntries[E any](c *Changes, old, cur map[string]E, status map[string]Status, list *[]Change,
	meta func(E) (string, string), what func(o, n E) string) {
	for _, id := range union(old, cur) {
		o, inOld := old[id]
		n, inNew := cur[id]
		ch := Change{ID: id}
		switch {
		case !inOld:
			ch.Status = Added
			ch.Title, ch.Level = meta(n)
		case !inNew:
			ch.Status = Removed
			ch.Title, ch.Level = meta(o)
		default:
			ch.Title, ch.Level = meta(n)
			ch.Status, ch.What = Changed, what(o, n)
		}
		c.record(status, id, ch, list)
	}
}

// record notes ch under id, listing it unless nothing moved.
func (c *Changes) record(status map[string]Status, id string, ch Change, list *[]Change) {
	if ch.Status == Changed && ch.What == "" {
		status[id] = Unchanged
		return
	}
	status[id] = ch.Status
	*list = append(*list, ch)
}

func union[V any](a, b map[string]V) []string {
	keys := slices.Collect(maps.Keys(a))
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// Empty reports whether nothing moved.
func (c Changes) Empty() bool {
	return len(c.Scenarios) == 0 && len(c.Decisions) == 0 && len(c.Formats) == 0 && !c.Protocol
}

// Scenario is what became of a scenario: new, changed, unchanged, or ""
// for an ID the suite does not have.
func (c Changes) Scenario(id string) Status { return c.scenarios[id] }

// Decision is what became of a decision, as Scenario.
func (c Changes) Decision(id string) Status { return c.decisions[id] }

// Breaking reports whether a change can fail an implementation that
// passed the old version: a scenario added or changed (its YAML or its
// golden), a decision added or changed, a schema or the protocol number
// changed. Removals alone cannot (docs/versioning.md).
func (c Changes) Breaking() bool {
	if len(c.Formats) > 0 || c.Protocol {
		return true
	}
	for _, ch := range slices.Concat(c.Scenarios, c.Decisions) {
		if ch.Status != Removed {
			return true
		}
	}
	return false
}

// Bump is a version increment.
type Bump string

// The increments, smallest first.
const (
	None  Bump = ""
	Patch Bump = "patch"
	Minor Bump = "minor"
	Major Bump = "major"
)

var bumpOrder = map[Bump]int{None: 0, Patch: 1, Minor: 2, Major: 3}

// Required is the increment the rule asks for after c, from version
// from: before 1.0 a breaking change moves the minor number and any other
// change the patch number; from 1.0 on, the major and the minor number.
func Required(from string, c Changes) Bump {
	v, _ := parseVersion(from)
	switch {
	case c.Empty():
		return None
	case c.Breaking() && v[0] == 0:
		return Minor
	case c.Breaking():
		return Major
	case v[0] == 0:
		return Patch
	}
	return Minor
}

// Between is the increment from version a to version b (None when b is
// not higher).
func Between(a, b string) Bump {
	va, _ := parseVersion(a)
	vb, _ := parseVersion(b)
	switch {
	case Compare(a, b) >= 0:
		return None
	case vb[0] != va[0]:
		return Major
	case vb[1] != va[1]:
		return Minor
	}
	return Patch
}

// AtLeast reports whether increment b is at least r.
func (b Bump) AtLeast(r Bump) bool { return bumpOrder[b] >= bumpOrder[r] }

// Next is version v incremented by b (a minor bump resets the patch
// number, a major bump both).
func Next(v string, b Bump) (string, error) {
	n, err := parseVersion(v)
	if err != nil {
		return "", err
	}
	switch b {
	case Major:
		n = [3]int{n[0] + 1, 0, 0}
	case Minor:
		n = [3]int{n[0], n[1] + 1, 0}
	case Patch:
		n[2]++
	default:
		return "", fmt.Errorf("bump %q: choose major, minor or patch", b)
	}
	return fmt.Sprintf("%d.%d.%d", n[0], n[1], n[2]), nil
}

// Compare orders two versions (each MAJOR.MINOR.PATCH; a malformed one
// sorts first).
func Compare(a, b string) int {
	va, _ := parseVersion(a)
	vb, _ := parseVersion(b)
	for i := range va {
		if va[i] != vb[i] {
			return va[i] - vb[i]
		}
	}
	return 0
}

func parseVersion(v string) ([3]int, error) {
	var out [3]int
	parts := strings.Split(v, ".")
	if len(parts) != 3 {
		return out, fmt.Errorf("version %q is not MAJOR.MINOR.PATCH", v)
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || strconv.Itoa(n) != p {
			return out, fmt.Errorf("version %q is not MAJOR.MINOR.PATCH", v)
		}
		out[i] = n
	}
	return out, nil
}
