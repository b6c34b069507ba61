package decisions

import (
	"os"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/polyloop/polyloop-conform/scenarios"
)

const record = `# 0099 — test

### 0099.D1 — First
- level: MUST
- status: accepted
- upstream: 0099 决策一

Body one.

#### 0099.D1.row — A row
- level: SHOULD
- status: superseded-by 0099.D2
- interpretation: reference

### 0099.D2 — Second
- level: MUST
- status: accepted

## Notes

Not part of 0099.D2.
`

func TestParse(t *testing.T) {
	ds, err := Parse("0099.md", []byte(record))
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 3 {
		t.Fatalf("%d decisions", len(ds))
	}
	if d := ds[0]; d.ID != "0099.D1" || d.Level != "MUST" || !d.Accepted() || d.Upstream != "0099 决策一" || !strings.Contains(d.Text, "Body one.") || d.Line != 3 {
		t.Errorf("D1 = %+v", d)
	}
	if d := ds[1]; d.Status != "superseded" || d.SupersededBy != "0099.D2" || !d.Interpretation {
		t.Errorf("D1.row = %+v", d)
	}
	if strings.Contains(ds[2].Text, "Not part") {
		t.Error("a plain heading did not end the record")
	}
	for body, want := range map[string]string{
		"### 0099.D1 - hyphen\n- level: MUST\n- status: accepted\n": "looks like a decision",
		"### 0099.D1 — x\n- level: MAY\n- status: accepted\n":       "level \"MAY\"",
		"### 0099.D1 — x\n- level: MUST\n":                          "needs `- level",
		"### 0099.D1 — x\n- level: MUST\n- status: draft\n":         "status \"draft\"",
	} {
		if _, err := Parse("x.md", []byte(body)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err = %v, want %q", body, err, want)
		}
	}
}

func TestCheck(t *testing.T) {
	set, err := Load(fstest.MapFS{"0099.md": {Data: []byte(record)}, "README.md": {Data: []byte("### 0099.D9 — ignored\n")}})
	if err != nil {
		t.Fatal(err)
	}
	scs := []*scenarios.Scenario{
		{ID: "a.one", File: "a.one.yaml", Level: "SHOULD", Decisions: []string{"0099.D1", "0099.D1.row", "0099.D7"}},
	}
	cov := Check(set, scs)
	joined := strings.Join(cov.Problems, "\n")
	for _, want := range []string{"cites 0099.D1.row, which is superseded by 0099.D2", "cites 0099.D7, which no record", "MUST decision 0099.D2 has no scenario",
		"MUST decision 0099.D1 is cited only by SHOULD scenarios (a.one)"} {
		if !strings.Contains(joined, want) {
			t.Errorf("problems lack %q:\n%s", want, joined)
		}
	}
	if len(cov.Rows) != 3 || len(cov.Rows[0].Scenarios) != 1 {
		t.Errorf("rows = %+v", cov.Rows)
	}
	scs[0].Level = "MUST"
	if joined := strings.Join(Check(set, scs).Problems, "\n"); strings.Contains(joined, "only by SHOULD") {
		t.Errorf("a MUST scenario's citation still counted as SHOULD only:\n%s", joined)
	}
	if _, err := Load(fstest.MapFS{"a.md": {Data: []byte(record)}, "b.md": {Data: []byte(record)}}); err == nil || !strings.Contains(err.Error(), "already defined") {
		t.Errorf("duplicate ids: %v", err)
	}
}

// TestProjectRecords: the project's own records parse and every accepted
// MUST decision is cited (what CI's coverage step also checks).
func TestProjectRecords(t *testing.T) {
	set, err := Load(os.DirFS("../../docs/design"))
	if err != nil {
		t.Fatal(err)
	}
	scs, err := scenarios.LoadAll(os.DirFS("../../scenarios"))
	if err != nil {
		t.Fatal(err)
	}
	if cov := Check(set, scs); len(cov.Problems) > 0 {
		t.Errorf("coverage problems:\n%s", strings.Join(cov.Problems, "\n"))
	}
}

func TestBodyLeavesOutHeadingAndMetadata(t *testing.T) {
	ds, err := Parse("x.md", []byte("### 0001.D1 — Title\n- level: MUST\n- status: accepted\n\nThe prose.\nMore.\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := ds[0].Body(); got != "The prose.\nMore." {
		t.Errorf("Body = %q", got)
	}
}
