package docgen

import (
	"strings"
	"testing"
)

func TestBlocks(t *testing.T) {
	tests := []struct {
		name, doc string
		want      []string // name=text of each block
		err       string
	}{
		{"two blocks", "a\n<!-- generated: one -->\nx\n<!-- end generated -->\nb\n<!-- generated: two -->\n<!-- end generated -->\n", []string{"one=x\n", "two="}, ""},
		{"no blocks", "plain text, 12 of them\n", nil, ""},
		{"unterminated", "<!-- generated: one -->\nx\n", nil, "page.md:1: block \"one\" has no <!-- end generated -->"},
		{"nested", "<!-- generated: one -->\n<!-- generated: two -->\n", nil, "page.md:2: block \"two\" starts inside block \"one\""},
		{"end alone", "x\n<!-- end generated -->\n", nil, "page.md:2: <!-- end generated --> without"},
		{"bad name", "<!-- generated: One Two -->\n", nil, "page.md:1: a generated block's marker reads"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			blocks, err := Blocks("page.md", []byte(tt.doc))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, b := range blocks {
				got = append(got, b.Name+"="+b.Text([]byte(tt.doc)))
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestReplace(t *testing.T) {
	doc := []byte("a\n<!-- generated: one -->\nold\n<!-- end generated -->\nb\n<!-- generated: two -->\n<!-- end generated -->\n")
	blocks, err := Blocks("page.md", doc)
	if err != nil {
		t.Fatal(err)
	}
	got := string(Replace(doc, blocks, []string{"new 1\n", "new 2\n"}))
	want := "a\n<!-- generated: one -->\nnew 1\n<!-- end generated -->\nb\n<!-- generated: two -->\nnew 2\n<!-- end generated -->\n"
	if got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}
