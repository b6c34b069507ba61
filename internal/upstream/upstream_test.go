package upstream

import (
	"os"
	"strings"
	"testing"
)

func readAlignment(t *testing.T, dir string) map[string]Decision {
	t.Helper()
	ds, err := ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]Decision{}
	for _, d := range ds {
		out[d.Key()] = d
	}
	return out
}

// TestParseAlignment: the downstream alignment document's numbered
// requirements and its 0010 note are pinned one by one; a requirement
// runs to the next one or to the next section, and text outside them
// (answered gaps, the gap register) changes no pin.
func TestParseAlignment(t *testing.T) {
	v1 := readAlignment(t, "testdata/alignment/v1")
	var keys []string
	for k := range v1 {
		keys = append(keys, k)
	}
	want := []string{"0010 说明", "govdoc 需求一", "govdoc 需求二", "govdoc 需求三"}
	if len(v1) != len(want) {
		t.Fatalf("keys %v, want %v", keys, want)
	}
	for _, k := range want {
		if _, ok := v1[k]; !ok {
			t.Errorf("no %s in %v", k, keys)
		}
	}
	if d := v1["govdoc 需求二"]; d.Line != 7 || d.Title != "取消要能穿透。 正在进行的模型调用与工具执行都要被打断，" {
		t.Errorf("需求二 = %+v", d)
	}
	v2 := readAlignment(t, "testdata/alignment/v2")
	for _, k := range want {
		changed := v1[k].Hash != v2[k].Hash
		if changed != (k == "govdoc 需求二") {
			t.Errorf("%s: changed = %v; only 需求二's second line changed in v2 (the gap register changed too, outside every requirement)", k, changed)
		}
	}
}

// TestParseAlignment_seed: on the real GovDoc alignment (when shared/ is
// beside the checkout), requirement 九 stops before the answered gaps.
func TestParseAlignment_seed(t *testing.T) {
	const seed = "../../../shared/seeds/govdoc-saas-alignment.zh.txt"
	data, err := os.ReadFile(seed)
	if err != nil {
		t.Skipf("no seed beside the checkout: %v", err)
	}
	ds, err := ParseAlignment("govdoc-saas-alignment.zh.txt", data)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 10 {
		t.Fatalf("%d pins, want nine requirements and the 0010 note", len(ds))
	}
	lines := strings.Split(string(data), "\n")
	nine := ds[len(ds)-1]
	if nine.Heading != "需求九" {
		t.Fatalf("last pin %s", nine.Key())
	}
	end := nine.Line
	for end < len(lines) && !strings.HasPrefix(lines[end], "已经有答案的") {
		end++
	}
	if end == len(lines) {
		t.Fatal("the seed has no 已经有答案的 section after requirement 九")
	}
	if want := Hash(strings.Join(lines[nine.Line-1:end], "\n")); nine.Hash != want {
		t.Errorf("requirement 九 is not pinned as lines %d–%d (up to the answered gaps)", nine.Line, end)
	}
}
