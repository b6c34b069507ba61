package conformance_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/polyloop/polyloop-conform/internal/engine"
	"github.com/polyloop/polyloop-conform/internal/golden"
	"github.com/polyloop/polyloop-conform/internal/implproc"
	"github.com/polyloop/polyloop-conform/internal/knownfail"
	"github.com/polyloop/polyloop-conform/internal/refdriver"
	"github.com/polyloop/polyloop-conform/internal/report"
	"github.com/polyloop/polyloop-conform/reference/tools"
	"github.com/polyloop/polyloop-conform/scenarios"
	"github.com/polyloop/polyloop-conform/trajectories"
)

var (
	update      = flag.Bool("update", false, "rewrite golden trajectories from the implementation (only when its expect checks pass)")
	allowShrink = flag.Bool("allow-shrink", false, "with -update: accept goldens that lose fields or steps")
)

const goldenDir = "../trajectories"

func TestConformance(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "PolyLoop conformance")
}

var (
	all   = mustLoad()
	suite = &engine.Suite{Scenarios: all}
	// known is the known-failing list in POLYLOOP_KNOWN_FAILING, the same
	// file format and the same rules as run --known-failing.
	known *knownfail.List
)

func mustLoad() []*scenarios.Scenario {
	scs, err := scenarios.LoadAll(os.DirFS("../scenarios"))
	if err != nil {
		panic("conformance: cannot load scenarios:\n" + err.Error())
	}
	return scs
}

// impl is the driver every spec runs against: the in-process reference,
// or the command line in POLYLOOP_IMPL over the stdio protocol.
var impl engine.Driver = refdriver.Driver{Schemas: &tools.SchemaCache{}}

func driver() engine.Driver { return impl }

// The in-process reference is judged in the strict profile: its own
// wording is part of its regression tests. Another implementation is
// judged by what the design decides, unless POLYLOOP_STRICT=1 asks for
// byte equality.
var _ = BeforeSuite(func() {
	suite.Strict = true
	if cmdline := os.Getenv("POLYLOOP_IMPL"); cmdline != "" {
		if *update {
			Fail("-update writes goldens from the reference only; unset POLYLOOP_IMPL (it is " + cmdline + ") to regenerate them")
		}
		suite.Strict = os.Getenv("POLYLOOP_STRICT") == "1"
		c := &implproc.Client{
			Command: func() *exec.Cmd { return exec.Command("/bin/sh", "-c", cmdline) },
			Logs:    GinkgoWriter,
		}
		// The client's context is the whole suite's, not this node's:
		// BeforeSuite's ctx is cancelled when it returns, and every
		// scenario after it failed with "context canceled".
		base, stop := context.WithCancel(context.Background())
		DeferCleanup(stop)
		Expect(c.Start(base)).To(Succeed(), "POLYLOOP_IMPL=%q did not complete the handshake", cmdline)
		impl = c
		DeferCleanup(c.Close)
	}
	if file := os.Getenv("POLYLOOP_KNOWN_FAILING"); file != "" {
		data, err := os.ReadFile(file)
		Expect(err).NotTo(HaveOccurred(), "POLYLOOP_KNOWN_FAILING")
		known, err = knownfail.Parse(file, data)
		Expect(err).NotTo(HaveOccurred())
		ids := make([]string, len(all))
		for i, sc := range all {
			ids[i] = sc.ID
		}
		Expect(known.Unmatched(ids)).To(BeEmpty(), "patterns in %s that match no scenario", file)
	}
	g, err := trajectories.GoldensFromDir(goldenDir)
	Expect(err).NotTo(HaveOccurred())
	if !*update {
		suite.Goldens = g
	}
})

var _ = Describe("suite hygiene", func() {
	It("has a golden for every scenario and a scenario for every golden", func() {
		if *update {
			Skip("regenerating goldens")
		}
		Expect(suite.Missing()).To(BeEmpty())
	})
})

var _ = func() bool {
	families := map[string][]*scenarios.Scenario{}
	var order []string
	for _, sc := range all {
		fam := scenarios.Family(sc.ID)
		if _, ok := families[fam]; !ok {
			order = append(order, fam)
		}
		families[fam] = append(families[fam], sc)
	}
	for _, fam := range order {
		Describe(fam, func() {
			for _, sc := range families[fam] {
				labels := append([]string{sc.Level}, sc.Requires...)
				It(sc.ID+": "+sc.Title, Label(labels...), func(ctx SpecContext) {
					runScenario(ctx, sc)
				})
			}
		})
	}
	return true
}()

func runScenario(ctx context.Context, sc *scenarios.Scenario) {
	res := suite.Run(ctx, driver(), sc)
	row := report.RowOf(sc, res)
	report.MarkKnownFailing(&row, known)
	switch row.Verdict {
	case report.Skip:
		Skip(row.Note)
	case report.KnownFailing:
		Skip(row.Note + ":\n  " + strings.Join(res.Messages(), "\n  "))
	case report.Stale:
		Fail(row.Note)
	case report.Fail:
		Fail(fmt.Sprintf("%s failed against %s:\n  %s", sc.ID, driver().Name(), strings.Join(res.Messages(), "\n  ")))
	}
	if *update {
		ch, err := golden.Write(goldenDir, res.Trajectory, *allowShrink)
		Expect(err).NotTo(HaveOccurred())
		if ch.Changed() {
			fmt.Fprintln(GinkgoWriter, ch.String())
			AddReportEntry("golden", ch.String())
		}
	}
}
