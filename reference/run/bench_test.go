package run

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/polyloop/polyloop-conform/reference/assembly"
	"github.com/polyloop/polyloop-conform/reference/journal"
	"github.com/polyloop/polyloop-conform/reference/tools"
)

const benchSteps = 10

func benchRequest(b *testing.B) *Request {
	b.Helper()
	reg, err := tools.NewRegistry(tools.ToolSpec{Name: "read", ReplayPolicy: tools.ReplaySafe,
		Parameters: map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}, "required": []any{"path"}},
		Handler:    func(context.Context, map[string]any) (string, error) { return "contents", nil }})
	if err != nil {
		b.Fatal(err)
	}
	ex, _ := reg.Executor()
	req, err := NewRequest(RequestConfig{Definition: &Definition{RunFragment: "run"}, GoalFragment: "goal",
		Budget: Budget{MaxEffectiveSteps: benchSteps, MaxTotalSteps: benchSteps}, Tools: reg, Executor: ex})
	if err != nil {
		b.Fatal(err)
	}
	return req
}

var benchModel = ModelFunc(func(context.Context, []assembly.Message) (string, error) {
	return `{"action":{"tool":"read","arguments":{"path":"a.txt"}}}`, nil
})

// BenchmarkStep measures the kernel's own cost per step: assembly, parsing,
// validation, settlement, judging, events; the fake model and handler are
// trivial. ns/step is the number bench/run reports.
func BenchmarkStep(b *testing.B) {
	req := benchRequest(b)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := Run(ctx, req, Options{Model: benchModel})
		if err != nil || len(res.Steps) != benchSteps {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchSteps), "ns/step")
}

// BenchmarkStepJournal runs the same steps with the journal in a directory
// on the default temporary file system, then, in the same benchmark, writes
// and fsyncs the same number of records of the same sizes to a bare file
// there, and reports the ratio of the two.
func BenchmarkStepJournal(b *testing.B) {
	req := benchRequest(b)
	ctx := context.Background()
	root := b.TempDir()
	var sizes []int
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		dir := filepath.Join(root, strconv.Itoa(i))
		if _, err := Run(ctx, req, Options{Model: benchModel, JournalDir: dir}); err != nil {
			b.Fatal(err)
		}
		if i == 0 {
			c, err := journal.ReadFile(dir)
			if err != nil {
				b.Fatal(err)
			}
			for _, r := range c.Records {
				line, _ := journal.Encode(r)
				sizes = append(sizes, len(line))
			}
		}
	}
	journalled := b.Elapsed()
	b.StopTimer()
	bare := bareFsyncs(b, root, sizes, b.N)
	b.ReportMetric(float64(journalled.Nanoseconds())/float64(b.N*benchSteps), "ns/step")
	b.ReportMetric(float64(journalled)/float64(bare), "journal/fsync")
	b.ReportMetric(float64(len(sizes)), "records/run")
}

// bareFsyncs writes runs × len(sizes) records with one write and one fsync
// each, to new files as the journal does, and returns the time taken.
func bareFsyncs(b *testing.B, root string, sizes []int, runs int) time.Duration {
	buf := make([]byte, 0, 4096)
	start := time.Now()
	for i := 0; i < runs; i++ {
		f, err := os.OpenFile(filepath.Join(root, "bare-"+strconv.Itoa(i)), os.O_CREATE|os.O_EXCL|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			b.Fatal(err)
		}
		for _, n := range sizes {
			buf = buf[:0]
			for len(buf) < n {
				buf = append(buf, 'x')
			}
			if _, err := f.Write(buf); err != nil {
				b.Fatal(err)
			}
			if err := f.Sync(); err != nil {
				b.Fatal(err)
			}
		}
		f.Close()
	}
	return time.Since(start)
}
