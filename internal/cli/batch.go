package cli

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/polyloop/polyloop-conform/internal/engine"
	"github.com/polyloop/polyloop-conform/internal/generate"
	"github.com/polyloop/polyloop-conform/internal/refdriver"
	"github.com/polyloop/polyloop-conform/internal/report"
	"github.com/polyloop/polyloop-conform/internal/shard"
	"github.com/polyloop/polyloop-conform/reference/tools"
)

// batchFlags are run's flags for its generated batch: after the
// scenarios, run compares the implementation with the built-in reference
// on cases generated from a seed (docs/generate.md, "The gate generates").
type batchFlags struct {
	count int // -1 until resolved: the default
	out   string
	seed  uint64
}

func (b *batchFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&b.count, "generate", -1, fmt.Sprintf("after the scenarios, compare `N` generated cases with the built-in reference (default %d when neither --run nor --scenarios is given; 0: none); --seed S draws other cases", generate.BatchCount))
	fs.StringVar(&b.out, "generate-out", "", "write each generated case that differs to `DIR` as <id>.yaml and <id>.json (the reference's trajectory), ready to add")
}

// resolve settles the batch's size and seed once the flags are parsed:
// the default batch runs when the whole built-in suite does (neither
// --run nor --scenarios selects something else; partial is set then);
// seed is the run's (--seed, or a fresh one drawn for this run), so no
// kernel can know the cases before its CI does, and the report's seed
// replays them.
func (b *batchFlags) resolve(partial bool, seed uint64) error {
	b.seed = seed
	switch {
	case b.count < -1:
		return fmt.Errorf("--generate %d: give a number of cases, or 0 for none", b.count)
	case b.count == -1 && partial:
		b.count = 0 // a selection runs what it selects
	case b.count == -1:
		b.count = generate.BatchCount
	}
	if b.out != "" && b.count > 0 {
		return writableDir(b.out)
	}
	return nil
}

// batchShardKey places the batch in a shard: one fixed key, not the
// seed, so that exactly one of N shards runs the batch even when each
// shard draws its own seed (docs/sharding.md, "The generated batch").
const batchShardKey = "generated"

// run compares d with the reference on the batch and returns its rows:
// one failing row per difference, with the scenario to add and the command
// that replays the batch (replay), and one passing row for the cases that
// agreed. A sharded run gives the whole batch to one shard.
func (b *batchFlags) run(ctx context.Context, d engine.Driver, sh shard.Shard, timeout time.Duration, replay string) ([]report.Row, error) {
	if !b.runs(sh) {
		return nil, nil
	}
	sources, err := generateSources("")
	if err != nil {
		return nil, err
	}
	start := time.Now()
	sum, err := generate.Run(ctx, generate.Options{
		Reference: refdriver.Driver{Schemas: &tools.SchemaCache{}}, Impl: d,
		Seed: b.seed, Count: b.count, Out: b.out, Timeout: timeout, Shrunk: generate.BatchShrunk, Sources: sources, Replay: replay,
	})
	if err != nil && ctx.Err() == nil {
		return nil, fmt.Errorf("the generated batch: %w", err)
	}
	rows := generateRows(sum, b.seed, b.out, time.Since(start), replay)
	for i := range rows {
		rows[i].Note = "generated batch (--generate 0 turns it off): " + rows[i].Note
	}
	return rows, nil
}

// runs says whether this run (or this shard of it) runs the batch.
func (b *batchFlags) runs(sh shard.Shard) bool { return b.count > 0 && sh.Has(batchShardKey) }
