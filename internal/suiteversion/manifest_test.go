package suiteversion_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/polyloop/polyloop-conform/docs"
	"github.com/polyloop/polyloop-conform/internal/protocol"
	"github.com/polyloop/polyloop-conform/internal/suiteversion"
)

var (
	update = flag.Bool("update", false, "rewrite docs/versions/<current version>.json and CHANGELOG.md from the tree (a version not yet released)")
	bump   = flag.String("bump", "", "start the next version (`major|minor|patch`): write internal/protocol/suiteversion.go, its manifest and CHANGELOG.md")
	// -reconstruct DIR -as V -source TEXT writes the manifest of version V
	// from a suite's tree in DIR (scenarios/, trajectories/, docs/design/,
	// docs/protocol.schema.json), e.g. one taken from git with `git
	// archive`: how 0.1.0's was made.
	reconstruct = flag.String("reconstruct", "", "write the manifest of -as VERSION from the suite's tree in `DIR`")
	as          = flag.String("as", "", "the version -reconstruct writes")
	source      = flag.String("source", "", "where -reconstruct's tree came from, for the changelog")
)

const (
	versionsDir   = "../../docs/versions"
	changelogFile = "../../CHANGELOG.md"
	versionFile   = "../../internal/protocol/suiteversion.go"
)

// TestManifest keeps the suite's version honest (docs/versioning.md): the
// newest manifest is protocol.SuiteVersion's and matches the tree (every
// scenario's YAML and golden, every decision record, the schemas); each
// version follows the one before with the increment the rule asks for;
// CHANGELOG.md is what the manifests give. With -update, -bump or
// -reconstruct it writes them instead.
func TestManifest(t *testing.T) {
	tree, err := suiteversion.Compute(suiteversion.Embedded(protocol.Version))
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case *reconstruct != "":
		writeReconstructed(t)
	case *bump != "":
		next, err := suiteversion.Next(protocol.SuiteVersion, suiteversion.Bump(*bump))
		if err != nil {
			t.Fatal(err)
		}
		writeVersionFile(t, next)
		tree.Version = next
		writeManifest(t, tree)
		t.Logf("suite version %s → %s: commit %s, docs/versions/%s.json and CHANGELOG.md", protocol.SuiteVersion, next, versionFile, next)
	case *update:
		tree.Version = protocol.SuiteVersion
		writeManifest(t, tree)
	}
	if *reconstruct != "" || *bump != "" || *update {
		return
	}
	ms, err := suiteversion.Load(os.DirFS(versionsDir))
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) == 0 {
		t.Fatalf("no manifest in docs/versions: %s", suiteversion.UpdateCommand)
	}
	newest := ms[len(ms)-1]
	if newest.Version != protocol.SuiteVersion {
		t.Fatalf("the newest manifest is docs/versions/%s.json, but the suite calls itself %s (protocol.SuiteVersion): bump with %s, not by hand", newest.Version, protocol.SuiteVersion, suiteversion.BumpCommand)
	}
	if c := suiteversion.Diff(newest, tree); !c.Empty() {
		t.Errorf("the suite moved since docs/versions/%s.json was written: %s.\n"+
			"If %s is not released yet, regenerate its manifest and the changelog: %s\n"+
			"If it is, start the next version (docs/versioning.md says which bump; this change needs at least %s): %s",
			newest.Version, describe(c), newest.Version, suiteversion.UpdateCommand, suiteversion.Required(newest.Version, c), strings.Replace(suiteversion.BumpCommand, "minor", string(orMinor(suiteversion.Required(newest.Version, c))), 1))
	}
	for i := 1; i < len(ms); i++ {
		c := suiteversion.Diff(ms[i-1], ms[i])
		if got, want := suiteversion.Between(ms[i-1].Version, ms[i].Version), suiteversion.Required(ms[i-1].Version, c); !got.AtLeast(want) || got == suiteversion.None {
			t.Errorf("%s follows %s as a %q bump, but what moved (%s) asks for %q (docs/versioning.md)", ms[i].Version, ms[i-1].Version, got, describe(c), want)
		}
	}
	want := suiteversion.Changelog(ms)
	got, err := os.ReadFile(changelogFile)
	if err != nil || string(got) != want {
		t.Errorf("CHANGELOG.md is not what docs/versions gives (%v): %s", err, suiteversion.UpdateCommand)
	}
	// The binary carries the same manifests as the tree (run --since).
	embedded, err := suiteversion.Load(docs.Versions())
	if err != nil || len(embedded) != len(ms) {
		t.Errorf("docs.Versions() holds %d manifests (%v), docs/versions %d", len(embedded), err, len(ms))
	}
}

func orMinor(b suiteversion.Bump) suiteversion.Bump {
	if b == suiteversion.None {
		return suiteversion.Minor
	}
	return b
}

// describe names up to 8 moved IDs of each kind.
func describe(c suiteversion.Changes) string {
	var parts []string
	for _, l := range []struct {
		what string
		list []suiteversion.Change
	}{{"scenarios", c.Scenarios}, {"decisions", c.Decisions}} {
		if len(l.list) == 0 {
			continue
		}
		var ids []string
		for i, ch := range l.list {
			if i == 8 {
				ids = append(ids, fmt.Sprintf("… %d more", len(l.list)-i))
				break
			}
			ids = append(ids, fmt.Sprintf("%s %s", ch.ID, ch.Status))
		}
		parts = append(parts, l.what+": "+strings.Join(ids, ", "))
	}
	if len(c.Formats) > 0 {
		parts = append(parts, "formats: "+strings.Join(c.Formats, ", "))
	}
	if c.Protocol {
		parts = append(parts, "the protocol number")
	}
	return strings.Join(parts, "; ")
}

func writeManifest(t *testing.T, m *suiteversion.Manifest) {
	t.Helper()
	data, err := suiteversion.Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(versionsDir, m.Version+".json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	writeChangelog(t)
}

func writeChangelog(t *testing.T) {
	t.Helper()
	ms, err := suiteversion.Load(os.DirFS(versionsDir))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(changelogFile, []byte(suiteversion.Changelog(ms)), 0o644); err != nil {
		t.Fatal(err)
	}
}

var versionConst = regexp.MustCompile(`(?m)^const SuiteVersion = "[^"]*"$`)

func writeVersionFile(t *testing.T, v string) {
	t.Helper()
	data, err := os.ReadFile(versionFile)
	if err != nil {
		t.Fatal(err)
	}
	if !versionConst.Match(data) {
		t.Fatalf("%s has no `const SuiteVersion = \"…\"` line", versionFile)
	}
	data = versionConst.ReplaceAll(data, []byte(`const SuiteVersion = "`+v+`"`))
	if err := os.WriteFile(versionFile, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func writeReconstructed(t *testing.T) {
	t.Helper()
	if *as == "" || *source == "" {
		t.Fatal("-reconstruct DIR needs -as VERSION and -source TEXT")
	}
	dir := *reconstruct
	schema, err := os.ReadFile(filepath.Join(dir, "docs", "protocol.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := suiteversion.Compute(suiteversion.Tree{Scenarios: os.DirFS(filepath.Join(dir, "scenarios")), Goldens: os.DirFS(filepath.Join(dir, "trajectories")),
		Design: os.DirFS(filepath.Join(dir, "docs", "design")), ProtocolSchema: schema, Protocol: protocol.Version})
	if err != nil {
		t.Fatal(err)
	}
	m.Version, m.Source = *as, *source
	writeManifest(t, m)
}
