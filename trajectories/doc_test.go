package trajectories

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/polyloop/polyloop-conform/internal/atomicfile"
)

var updateDoc = flag.Bool("update-doc", false, "rewrite the field table in docs/trajectory-format.md from the schema")

const (
	docFile    = "../docs/trajectory-format.md"
	tableBegin = "<!-- fields: generated from trajectory.schema.json by go test ./trajectories -args -update-doc -->"
	tableEnd   = "<!-- end of fields -->"
)

// fieldTable renders every field of the format with its class.
func fieldTable(fs []Field) string {
	var b strings.Builder
	b.WriteString("| field | class | meaning |\n|---|---|---|\n")
	for _, f := range fs {
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", f.Path, f.Class, strings.ReplaceAll(f.Meaning, "|", `\|`))
	}
	return b.String()
}

// TestFormatDocListsEveryField keeps docs/trajectory-format.md's table
// equal to the schema's declared classes, so the document people read is
// the one the comparison applies.
func TestFormatDocListsEveryField(t *testing.T) {
	fs, err := Fields()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(docFile)
	if err != nil {
		t.Fatal(err)
	}
	s := string(doc)
	i, j := strings.Index(s, tableBegin), strings.Index(s, tableEnd)
	if i < 0 || j < i {
		t.Fatalf("%s lacks the markers %q … %q", docFile, tableBegin, tableEnd)
	}
	want := tableBegin + "\n" + fieldTable(fs) + tableEnd
	if s[i:j+len(tableEnd)] == want {
		return
	}
	if *updateDoc {
		if err := atomicfile.Write(docFile, []byte(s[:i]+want+s[j+len(tableEnd):])); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s: the field table differs from trajectory.schema.json; run go test ./trajectories -args -update-doc and review the change", docFile)
}
