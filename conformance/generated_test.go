package conformance_test

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/polyloop/polyloop-conform/internal/generate"
	"github.com/polyloop/polyloop-conform/internal/refdriver"
	"github.com/polyloop/polyloop-conform/reference/tools"
	"github.com/polyloop/polyloop-conform/scenarios"
)

// The generated batch, as run has it: cases generated from a fresh seed
// each run (so no kernel can learn them), compared with the built-in
// reference. POLYLOOP_GENERATE=N changes the count (0 skips it),
// POLYLOOP_SEED=S gives the seed (the spec's report entry names the one it
// drew); a difference fails with the scenario to add.
var _ = Describe("generated", Label("generated"), func() {
	It("agrees with the reference on a seeded batch of generated cases", func(ctx SpecContext) {
		count, seed := generate.BatchCount, generate.NewSeed()
		if v := os.Getenv("POLYLOOP_GENERATE"); v != "" {
			n, err := strconv.Atoi(v)
			Expect(err).NotTo(HaveOccurred(), "POLYLOOP_GENERATE=%q: give a number of cases", v)
			count = n
		}
		if v := os.Getenv("POLYLOOP_SEED"); v != "" {
			s, err := strconv.ParseUint(v, 10, 64)
			Expect(err).NotTo(HaveOccurred(), "POLYLOOP_SEED=%q: give a number", v)
			seed = s
		}
		if count == 0 {
			Skip("POLYLOOP_GENERATE=0")
		}
		AddReportEntry("seed", fmt.Sprintf("%d (POLYLOOP_SEED=%d replays the batch)", seed, seed))
		sources, err := generate.LoadSources(scenarios.Embedded())
		Expect(err).NotTo(HaveOccurred())
		sum, err := generate.Run(ctx, generate.Options{
			Reference: refdriver.Driver{Schemas: &tools.SchemaCache{}}, Impl: driver(),
			Seed: seed, Count: count, Shrunk: generate.BatchShrunk, Sources: sources,
		})
		Expect(err).NotTo(HaveOccurred())
		var b strings.Builder
		for _, f := range sum.Found {
			fmt.Fprintf(&b, "\n%s [%s]:\n  %s\nthe scenario to add, as %s.yaml:\n%s", f.ID, strings.Join(f.Decisions, " "),
				strings.Join(f.Problems, "\n  "), f.ID, f.YAML)
		}
		Expect(sum.Found).To(BeEmpty(), "%d of %d generated cases (seed %d; POLYLOOP_SEED replays it) differ from the reference:%s", len(sum.Found), sum.Cases, seed, b.String())
		Expect(sum.Cases).To(BeNumerically(">", 0), "no generated case could be compared (%d skipped)", sum.Skipped)
	})
})
