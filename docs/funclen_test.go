package docs_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// maxFuncLines is the longest a function may be, counted from its func
// line to its closing brace: issue 43 brought runCmd (163 lines) and
// report.JUnit (105) under it by extracting helpers, and this keeps them
// and every other function there.
const maxFuncLines = 99

// longFuncs are the functions that were already longer when the limit
// came, keyed "path funcName", each with why it is not split yet. An
// entry that no longer needs to be here is an error too, so the list
// only shrinks.
var longFuncs = map[string]string{
	"internal/docgen/presence.go PresenceTable": "one literal with a row per trajectory field; issue 43 did not name it",
}

// TestFunctionLength fails when a function outside a _test.go file (tests
// are table-driven and may be long) grows to more than maxFuncLines lines.
func TestFunctionLength(t *testing.T) {
	fset := token.NewFileSet()
	seen := map[string]bool{}
	err := filepath.WalkDir("..", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != ".." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel := filepath.ToSlash(strings.TrimPrefix(p, "../"))
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1
			key := rel + " " + fd.Name.Name
			if n <= maxFuncLines {
				continue
			}
			if _, ok := longFuncs[key]; ok {
				seen[key] = true
				continue
			}
			t.Errorf("%s:%d: %s is %d lines; split it into helpers with doc comments (at most %d lines each)",
				rel, fset.Position(fd.Pos()).Line, fd.Name.Name, n, maxFuncLines)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for key := range longFuncs {
		if !seen[key] {
			t.Errorf("%s is no longer over %d lines (or is gone): remove it from longFuncs", key, maxFuncLines)
		}
	}
}
