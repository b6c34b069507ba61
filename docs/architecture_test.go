package docs

import (
	"encoding/json"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestArchitecture keeps docs/architecture.md's layer table true: every
// package of the module is on exactly one layer, every import inside the
// module goes to a lower layer, and reference/ imports nothing of the
// harness but internal/jsontext.
func TestArchitecture(t *testing.T) {
	page, err := os.ReadFile("architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(page)
	i, j := strings.Index(s, "<!-- layers:"), strings.Index(s, "<!-- end of layers -->")
	if i < 0 || j < i {
		t.Fatal("docs/architecture.md has no layer table")
	}
	layer := map[string]int{}
	row := regexp.MustCompile(`^\| (\d+) \| (.*) \|$`)
	pkg := regexp.MustCompile("`([^`]+)`")
	for _, line := range strings.Split(s[i:j], "\n") {
		m := row.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		for _, p := range pkg.FindAllStringSubmatch(m[2], -1) {
			if _, dup := layer[p[1]]; dup {
				t.Errorf("%s is on two layers", p[1])
			}
			layer[p[1]] = n
		}
	}
	cmd := exec.Command("go", "list", "-json", "./...")
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const module = "github.com/polyloop/polyloop-conform/"
	dec := json.NewDecoder(strings.NewReader(string(out)))
	seen := map[string]bool{}
	for dec.More() {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(p.ImportPath, module)
		seen[name] = true
		at, ok := layer[name]
		if !ok {
			t.Errorf("package %s is on no layer of docs/architecture.md", name)
			continue
		}
		for _, imp := range p.Imports {
			dep, inModule := strings.CutPrefix(imp, module)
			if !inModule {
				continue
			}
			if l, ok := layer[dep]; ok && l >= at {
				t.Errorf("%s (layer %d) imports %s (layer %d): a package imports only lower layers", name, at, dep, l)
			}
			if strings.HasPrefix(name, "reference/") && !strings.HasPrefix(dep, "reference/") && dep != "internal/jsontext" {
				t.Errorf("%s imports %s: the reference imports nothing of the harness but internal/jsontext", name, dep)
			}
		}
	}
	for name := range layer {
		if !seen[name] {
			t.Errorf("docs/architecture.md names %s, which is not a package", name)
		}
	}
}
