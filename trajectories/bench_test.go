package trajectories

import "testing"

// BenchmarkParseGoldens schema-validates and decodes every golden.
func BenchmarkParseGoldens(b *testing.B) {
	g, err := Goldens()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for id, data := range g {
			if _, _, err := Parse(id, data); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.N*len(g))/b.Elapsed().Seconds(), "trajectories/s")
}
