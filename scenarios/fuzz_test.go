package scenarios

import (
	"fmt"
	"os"
	"testing"
	"time"
)

func FuzzParse(f *testing.F) {
	for _, name := range []string{"outcome.normal-return.yaml", "budget.per-request-phases.yaml", "resume.torn-tail.yaml"} {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("id: a.b\n"))
	f.Add([]byte("a: &a [*a]\n"))
	f.Add([]byte("- [\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		// A hang is a failure too: panic from a watchdog so the fuzzer
		// records the input instead of waiting forever.
		watchdog := time.AfterFunc(5*time.Second, func() { panic(fmt.Sprintf("Parse hung on %q", data)) })
		defer watchdog.Stop()
		sc, err := Parse("fuzz.yaml", data)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		if !IDPattern.MatchString(sc.ID) || len(sc.Runs()) == 0 {
			t.Fatalf("accepted an invalid scenario: %+v", sc)
		}
	})
}
