package refkernel

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/polyloop/polyloop-conform/polyloopkit"
)

// The runner's lines of each recorded exchange in docs/examples, fed to
// the kit in one go (answers before the calls they answer, as a
// transcript replayed by hand), bring back the reference's lines as
// serve-reference sent them: the kit numbers calls, keeps early answers,
// releases a cancelled call and sends the result exactly as the
// reference's own stdio side does. Only the hello, which names the
// implementation, differs.
func TestKit_replaysTheRecordedExchanges(t *testing.T) {
	files, _ := filepath.Glob("../../docs/examples/*.jsonl")
	if len(files) == 0 {
		t.Fatal("no recorded exchanges in docs/examples")
	}
	for _, file := range files {
		var in bytes.Buffer
		var want []string
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for line := range strings.Lines(string(data)) {
			var l struct {
				From    string          `json:"from"`
				Message json.RawMessage `json:"message"`
			}
			if err := json.Unmarshal([]byte(line), &l); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			if l.From == "runner" {
				in.Write(append(l.Message, '\n'))
			} else if !strings.Contains(string(l.Message), `"type":"hello"`) {
				want = append(want, canonical(t, l.Message))
			}
		}
		var out bytes.Buffer
		if err := polyloopkit.Serve(context.Background(), Kernel(), &in, &out); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		var got []string
		sc := bufio.NewScanner(&out)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			if !strings.Contains(sc.Text(), `"type":"hello"`) {
				got = append(got, canonical(t, sc.Bytes()))
			}
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: the kit's lines differ from the recorded ones\ngot:\n%s\nwant:\n%s", filepath.Base(file), strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

// canonical is a message with its keys sorted, for comparison.
func canonical(t *testing.T, line []byte) string {
	var v any
	if err := json.Unmarshal(line, &v); err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(v)
	return string(out)
}
