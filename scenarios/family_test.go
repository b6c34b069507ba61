package scenarios

import "testing"

func TestFamily(t *testing.T) {
	for _, tc := range []struct{ id, want string }{
		{"parse.fenced-json", "parse"},
		{"govdoc.tolerant-json", "govdoc"},
		{"govdoc.real-auditor-pes-happy-path", "govdoc.real"},
		{"govdoc.reality-check", "govdoc"}, // only the "real-" prefix marks a recorded run
		{"bad", "bad"},
	} {
		if got := Family(tc.id); got != tc.want {
			t.Errorf("Family(%q) = %q, want %q", tc.id, got, tc.want)
		}
	}
}
