package scenarios

import "testing"

// BenchmarkLoadAll parses and schema-validates every embedded scenario.
func BenchmarkLoadAll(b *testing.B) {
	b.ReportAllocs()
	n := 0
	for i := 0; i < b.N; i++ {
		scs, err := LoadAll(Embedded())
		if err != nil {
			b.Fatal(err)
		}
		n = len(scs)
	}
	b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "scenarios/s")
}
