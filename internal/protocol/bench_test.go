package protocol

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkDecode decodes the implementation's messages of every recorded
// transcript in docs/examples, by the typed checks (what the runner does)
// and by the schema (the contract they agree with), for the ratio
// bench/run reports.
func BenchmarkDecode(b *testing.B) {
	var corpus [][]byte
	files, _ := filepath.Glob("../../docs/examples/*.jsonl")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		for _, line := range splitLines(data) {
			var e struct {
				From    string          `json:"from"`
				Message json.RawMessage `json:"message"`
			}
			if json.Unmarshal(line, &e) == nil && e.From == "implementation" {
				corpus = append(corpus, e.Message)
			}
		}
	}
	for _, d := range []struct {
		name   string
		decode func([]byte) (*Message, error)
	}{{"typed", Decode}, {"schema", decodeBySchema}} {
		b.Run(d.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				for _, line := range corpus {
					if _, err := d.decode(line); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
