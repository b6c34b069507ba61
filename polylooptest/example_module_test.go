package polylooptest

import (
	"os"
	"os/exec"
	"testing"
)

// The example module (examples/go, a module of its own, outside this
// one's packages) type-checks against this tree, tests included: an API
// change that breaks it fails go test ./... here, not only CI's step in
// examples/go. go vet compiles nothing the build cache does not already
// hold from this module's own build.
func TestExampleModule_buildsAgainstThisTree(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on the PATH to type-check examples/go with")
	}
	cmd := exec.Command(goTool, "vet", "./...")
	cmd.Dir = "../examples/go"
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("examples/go does not build against this tree (go vet ./... there): %v\n%s", err, out)
	}
}
