package trajectories

import (
	"fmt"
	"testing"
	"time"
)

func FuzzParse(f *testing.F) {
	g, err := Goldens()
	if err != nil {
		f.Fatal(err)
	}
	// Small goldens only: the fuzzer stalls on seeds of tens of kilobytes.
	for _, id := range []string{"executor.missing-handler", "cancel.during-tool-call", "journal.write-error-surfaces"} {
		f.Add(g[id])
	}
	f.Add([]byte(`{"format":"polyloop.trajectory/v1"}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		// A hang is a failure too: panic from a watchdog so the fuzzer
		// records the input instead of waiting forever.
		watchdog := time.AfterFunc(5*time.Second, func() { panic(fmt.Sprintf("Parse hung on %q", data)) })
		defer watchdog.Stop()
		tr, doc, err := Parse("fuzz.json", data)
		if err != nil {
			return
		}
		if doc == nil || tr.Format != Format {
			t.Fatalf("accepted without format: %+v", tr)
		}
		// What we accept we can write back and read again.
		out, err := Marshal(tr)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := Parse("again.json", out); err != nil {
			t.Fatalf("round trip failed: %v", err)
		}
	})
}
