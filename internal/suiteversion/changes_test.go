package suiteversion

import (
	"strings"
	"testing"
)

func manifest(version string, edit func(m *Manifest)) *Manifest {
	m := &Manifest{Version: version, Protocol: 1, Formats: map[string]string{ProtocolSchemaFile: "p1"},
		Scenarios: map[string]Scenario{
			"a.one": {Title: "One", Level: "MUST", YAML: "y1", Golden: "g1"},
			"a.two": {Title: "Two", Level: "SHOULD", YAML: "y2", Golden: "g2"},
		},
		Decisions: map[string]Decision{"0001.D1": {Title: "First", Level: "MUST", Status: "accepted", Text: "t1"}}}
	if edit != nil {
		edit(m)
	}
	return m
}

// TestDiffAndTheBumpRule: each kind of move is found and named, and asks
// for the increment docs/versioning.md gives it, before and after 1.0.
func TestDiffAndTheBumpRule(t *testing.T) {
	for _, tc := range []struct {
		name     string
		edit     func(m *Manifest)
		scenario map[string]Status
		decision map[string]Status
		what     string // a changed entry's What, "" when none
		pre, at1 Bump   // required from 0.3.1 and from 1.2.3
	}{
		{"nothing", nil, map[string]Status{"a.one": Unchanged, "x.y": ""}, map[string]Status{"0001.D1": Unchanged}, "", None, None},
		{"golden", func(m *Manifest) { s := m.Scenarios["a.one"]; s.Golden = "g9"; m.Scenarios["a.one"] = s },
			map[string]Status{"a.one": Changed, "a.two": Unchanged}, nil, "golden", Minor, Major},
		{"scenario and golden", func(m *Manifest) {
			m.Scenarios["a.two"] = Scenario{Title: "Two", Level: "SHOULD", YAML: "y9", Golden: "g9"}
		},
			map[string]Status{"a.two": Changed}, nil, "scenario and golden", Minor, Major},
		{"new scenario", func(m *Manifest) { m.Scenarios["a.three"] = Scenario{Title: "Three", Level: "SHOULD", YAML: "y3"} },
			map[string]Status{"a.three": Added}, nil, "", Minor, Major},
		{"decision text", func(m *Manifest) {
			m.Decisions["0001.D1"] = Decision{Title: "First", Level: "MUST", Status: "accepted", Text: "t9"}
		},
			nil, map[string]Status{"0001.D1": Changed}, "text", Minor, Major},
		{"decision level", func(m *Manifest) {
			m.Decisions["0001.D1"] = Decision{Title: "First", Level: "SHOULD", Status: "accepted", Text: "t1"}
		},
			nil, map[string]Status{"0001.D1": Changed}, "level MUST → SHOULD", Minor, Major},
		{"new decision", func(m *Manifest) {
			m.Decisions["0001.D2"] = Decision{Title: "Second", Level: "MUST", Status: "accepted", Text: "t2"}
		},
			nil, map[string]Status{"0001.D2": Added}, "", Minor, Major},
		{"schema", func(m *Manifest) { m.Formats[ProtocolSchemaFile] = "p2" }, nil, nil, "", Minor, Major},
		{"removal only", func(m *Manifest) { delete(m.Scenarios, "a.two") },
			map[string]Status{"a.two": Removed, "a.one": Unchanged}, nil, "", Patch, Minor},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Diff(manifest("0.3.1", nil), manifest("0.4.0", tc.edit))
			for id, want := range tc.scenario {
				if got := c.Scenario(id); got != want {
					t.Errorf("scenario %s: %q, want %q", id, got, want)
				}
			}
			for id, want := range tc.decision {
				if got := c.Decision(id); got != want {
					t.Errorf("decision %s: %q, want %q", id, got, want)
				}
			}
			var whats []string
			for _, ch := range append(c.Scenarios, c.Decisions...) {
				whats = append(whats, ch.What)
			}
			if tc.what != "" && !strings.Contains(strings.Join(whats, "|"), tc.what) {
				t.Errorf("what changed: %q, want %q", whats, tc.what)
			}
			if got := Required("0.3.1", c); got != tc.pre {
				t.Errorf("from 0.3.1: %q, want %q", got, tc.pre)
			}
			if got := Required("1.2.3", c); got != tc.at1 {
				t.Errorf("from 1.2.3: %q, want %q", got, tc.at1)
			}
		})
	}
}

func TestVersions(t *testing.T) {
	for _, tc := range []struct {
		from string
		bump Bump
		want string
	}{{"0.1.0", Minor, "0.2.0"}, {"0.2.3", Patch, "0.2.4"}, {"0.2.3", Minor, "0.3.0"}, {"0.9.9", Major, "1.0.0"}} {
		got, err := Next(tc.from, tc.bump)
		if err != nil || got != tc.want {
			t.Errorf("Next(%s, %s) = %s, %v; want %s", tc.from, tc.bump, got, err, tc.want)
		}
		if b := Between(tc.from, got); b != tc.bump {
			t.Errorf("Between(%s, %s) = %q, want %q", tc.from, got, b, tc.bump)
		}
	}
	if Compare("0.10.0", "0.9.0") <= 0 {
		t.Error("0.10.0 sorts before 0.9.0")
	}
	if Between("0.2.0", "0.2.0") != None || Between("0.3.0", "0.2.0") != None {
		t.Error("a version that does not move up is a bump")
	}
	for _, bad := range []string{"1.0", "v1.0.0", "1.02.0", "1.0.0-rc1"} {
		if _, err := Next(bad, Patch); err == nil {
			t.Errorf("%q taken as a version", bad)
		}
	}
	if _, err := Parse("0.2.0.json", []byte(`{"version":"0.3.0","protocol":1}`)); err == nil || !strings.Contains(err.Error(), "name it 0.3.0.json") {
		t.Errorf("a manifest under another version's name: %v", err)
	}
	if _, err := Parse("0.2.0.json", []byte(`{"version":"0.2.0","protocl":1}`)); err == nil {
		t.Error("a manifest with an unknown field was read")
	}
}

// TestChangelogNamesWhatMoved: an entry names each new, changed and
// removed scenario and decision with what changed, and says whether it
// breaks; the first version is counted.
func TestChangelogNamesWhatMoved(t *testing.T) {
	v1 := manifest("0.1.0", nil)
	v2 := manifest("0.2.0", func(m *Manifest) {
		s := m.Scenarios["a.one"]
		s.Golden = "g9"
		m.Scenarios["a.one"] = s
		m.Scenarios["a.three"] = Scenario{Title: "Three", Level: "MUST", YAML: "y3"}
		m.Decisions["0001.D1"] = Decision{Title: "First", Level: "MUST", Status: "accepted", Text: "t9"}
	})
	v3 := manifest("0.2.1", func(m *Manifest) {
		*m = *manifest("0.2.1", nil)
		s := m.Scenarios["a.one"]
		s.Golden = "g9"
		m.Scenarios["a.one"] = s
		m.Decisions["0001.D1"] = Decision{Title: "First", Level: "MUST", Status: "accepted", Text: "t9"}
	})
	log := Changelog([]*Manifest{v1, v2, v3})
	for _, want := range []string{
		"## 0.2.1\n\nNot breaking since 0.2.0 (a patch bump)", "### Scenarios removed (1)\n\n- `a.three` (MUST) — Three\n",
		"## 0.2.0\n\nBreaking since 0.1.0 (a minor bump)", "- `a.one` (MUST) — One [golden]", "- `0001.D1` (MUST) — First [text]",
		"### Scenarios new (1)\n\n- `a.three` (MUST) — Three\n", "## 0.1.0\n\nThe first version with a manifest: 2 scenarios (1 MUST), 1 decision records (1 accepted).",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("changelog lacks %q:\n%s", want, log)
		}
	}
	if strings.Index(log, "## 0.2.1") > strings.Index(log, "## 0.1.0") {
		t.Error("the newest version is not first")
	}
}
