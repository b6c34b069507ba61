package journalfile

import (
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func line(body string, table *crc32.Table) string {
	return fmt.Sprintf("%08x %s\n", crc32.Checksum([]byte(body), table), body)
}

func TestCheck(t *testing.T) {
	good := line(`{"type":"run_started"}`, castagnoli) + line(`{"type":"model_output","step":1}`, crc32.IEEETable)
	if err := Check([]byte(good + `0123abcd {"ty`)); err != nil {
		t.Fatalf("whole lines with either checksum and a torn tail: %v", err)
	}
	for name, bad := range map[string]string{
		"changed byte": strings.Replace(good, "model_output", "model_outpux", 1),
		"no checksum":  `{"type":"run_started"}` + "\n",
		"not hex":      "zzzzzzzz {}\n",
	} {
		err := Check([]byte(bad))
		if err == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		if !strings.Contains(err.Error(), "journal line") || !strings.Contains(err.Error(), "0002.D1.records") {
			t.Errorf("%s: %v does not name the line and the record", name, err)
		}
	}
}

func TestAppendTorn(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	first := line(`{"type":"run_started"}`, castagnoli)
	next := line(`{"type":"model_output","step":1,"output":"hello"}`, castagnoli)
	if err := os.WriteFile(path, []byte(first), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := AppendTorn(path, []byte(next)); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	whole, torn := Lines(data)
	if len(whole) != 1 || string(whole[0]) != first {
		t.Fatalf("whole lines %q, want the first record kept", whole)
	}
	if len(torn) == 0 || !strings.HasPrefix(next, string(torn)) || len(torn) >= len(next)-1 {
		t.Fatalf("torn tail %q is not a proper prefix of %q", torn, next)
	}
	if err := Check(data); err != nil {
		t.Fatal(err)
	}
}
