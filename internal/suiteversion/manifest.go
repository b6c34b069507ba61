// Package suiteversion says what a suite version holds and what moved
// between two: a manifest per version (docs/versions/<version>.json) lists
// every scenario with a hash of its YAML and of its golden, every decision
// record with a hash of its text, and a hash of each format's schema. The
// changelog (CHANGELOG.md) is generated from the manifests, the bump rule
// (docs/versioning.md) is checked on them, and `run --since V` marks each
// failure whose scenario or cited decision is new or changed since V.
package suiteversion

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/polyloop/polyloop-conform/docs"
	"github.com/polyloop/polyloop-conform/docs/design"
	"github.com/polyloop/polyloop-conform/internal/decisions"
	"github.com/polyloop/polyloop-conform/scenarios"
	"github.com/polyloop/polyloop-conform/trajectories"
)

// Manifest is what one suite version holds, hashed.
type Manifest struct {
	Version string `json:"version"`
	// Source says where the manifest was computed from when it was not
	// the tree of its own commit (the first, 0.1.0, was reconstructed
	// from git).
	Source string `json:"source,omitempty"`
	// Protocol is the stdio protocol's version number (hello's protocol).
	Protocol int `json:"protocol"`
	// Formats hashes each schema an implementation writes or reads:
	// protocol.schema.json, trajectory.schema.json, scenario.schema.json.
	Formats   map[string]string   `json:"formats"`
	Scenarios map[string]Scenario `json:"scenarios"`
	Decisions map[string]Decision `json:"decisions"`
}

// Scenario is one scenario's entry: its title and level, for the
// changelog, and the hashes of its YAML and of its golden trajectory.
type Scenario struct {
	Title  string `json:"title"`
	Level  string `json:"level"`
	YAML   string `json:"yaml"`
	Golden string `json:"golden,omitempty"`
}

// Decision is one decision record's entry: title, level and status, and
// the hash of its text without its `- reviewed:` note (a review changes
// nothing an implementation does).
type Decision struct {
	Title  string `json:"title"`
	Level  string `json:"level"`
	Status string `json:"status"`
	Text   string `json:"text"`
}

// Tree is the suite's files as a manifest reads them.
type Tree struct {
	Scenarios fs.FS // *.yaml, and scenario.schema.json
	Goldens   fs.FS // <id>.json, and trajectory.schema.json
	Design    fs.FS // the decision records, *.md
	// ProtocolSchema is docs/protocol.schema.json; Protocol the protocol's
	// version number.
	ProtocolSchema []byte
	Protocol       int
}

// Schema files whose hashes a manifest keeps.
const (
	ProtocolSchemaFile   = "protocol.schema.json"
	TrajectorySchemaFile = "trajectory.schema.json"
	ScenarioSchemaFile   = "scenario.schema.json"
)

// hash is a short content hash: 64 bits of SHA-256 say whether a file
// changed, which is all a manifest is for.
func hash(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:8])
}

// Compute hashes a tree. Version and Source are left for the caller.
func Compute(t Tree) (*Manifest, error) {
	m := &Manifest{Protocol: t.Protocol, Formats: map[string]string{ProtocolSchemaFile: hash(t.ProtocolSchema)},
		Scenarios: map[string]Scenario{}, Decisions: map[string]Decision{}}
	for _, f := range []struct {
		fsys fs.FS
		name string
	}{{t.Goldens, TrajectorySchemaFile}, {t.Scenarios, ScenarioSchemaFile}} {
		data, err := fs.ReadFile(f.fsys, f.name)
		if err != nil {
			return nil, fmt.Errorf("manifest: %w", err)
		}
		m.Formats[f.name] = hash(data)
	}
	names, err := fs.Glob(t.Scenarios, "*.yaml")
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		data, err := fs.ReadFile(t.Scenarios, n)
		if err != nil {
			return nil, err
		}
		// Only the fields the changelog shows are read: a manifest of an
		// older tree must not depend on today's scenario format.
		var head struct {
			ID    string `yaml:"id"`
			Title string `yaml:"title"`
			Level string `yaml:"level"`
		}
		if err := yaml.Unmarshal(data, &head); err != nil || head.ID == "" {
			return nil, fmt.Errorf("manifest: %s: no scenario id (%v)", n, err)
		}
		if _, dup := m.Scenarios[head.ID]; dup {
			return nil, fmt.Errorf("manifest: scenario %s is defined twice (%s)", head.ID, n)
		}
		s := Scenario{Title: head.Title, Level: head.Level, YAML: hash(data)}
		if golden, err := fs.ReadFile(t.Goldens, head.ID+".json"); err == nil {
			s.Golden = hash(golden)
		}
		m.Scenarios[head.ID] = s
	}
	set, err := decisions.Load(t.Design)
	if err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	for id, d := range set.ByID {
		m.Decisions[id] = Decision{Title: d.Title, Level: d.Level, Status: d.Status, Text: hash([]byte(withoutReview(d.Text)))}
	}
	return m, nil
}

// withoutReview drops a record's `- reviewed:` line.
func withoutReview(text string) string {
	lines := strings.Split(text, "\n")
	return strings.Join(slices.DeleteFunc(lines, func(l string) bool { return strings.HasPrefix(l, "- reviewed:") }), "\n")
}

// Load reads every <version>.json of fsys, oldest version first. A file
// whose name is not its version, or two of one version, is an error.
func Load(fsys fs.FS) ([]*Manifest, error) {
	names, err := fs.Glob(fsys, "*.json")
	if err != nil {
		return nil, err
	}
	var out []*Manifest
	for _, n := range names {
		data, err := fs.ReadFile(fsys, n)
		if err != nil {
			return nil, err
		}
		m, err := Parse(n, data)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b *Manifest) int { return Compare(a.Version, b.Version) })
	return out, nil
}

// Parse reads one manifest file named <version>.json.
func Parse(name string, data []byte) (*Manifest, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var m Manifest
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if _, err := parseVersion(m.Version); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if want := m.Version + ".json"; path.Base(name) != want {
		return nil, fmt.Errorf("%s holds version %s: name it %s", name, m.Version, want)
	}
	return &m, nil
}

// Encode writes a manifest as its file holds it: indented, keys sorted.
func Encode(m *Manifest) ([]byte, error) {
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// Find returns the manifest of version v.
func Find(ms []*Manifest, v string) (*Manifest, error) {
	var known []string
	for _, m := range ms {
		if m.Version == v {
			return m, nil
		}
		known = append(known, m.Version)
	}
	return nil, fmt.Errorf("no suite version %q: the versions with a manifest are %s (docs/versions)", v, strings.Join(known, ", "))
}

// Embedded is the tree built into the binary, with the protocol's
// version number.
func Embedded(protocolVersion int) Tree {
	return Tree{Scenarios: scenarios.Embedded(), Goldens: trajectories.Embedded(), Design: design.FS,
		ProtocolSchema: docs.ProtocolSchema(), Protocol: protocolVersion}
}
