package generate

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"sync"
	"testing"

	"github.com/polyloop/polyloop-conform/fakes"
	"github.com/polyloop/polyloop-conform/internal/deviation"
	"github.com/polyloop/polyloop-conform/internal/engine"
	"github.com/polyloop/polyloop-conform/scenarios"
	"github.com/polyloop/polyloop-conform/trajectories"
)

// TestNewSeedIsFresh: seeds drawn one after another differ and stay in
// range, so two default batches hold different cases.
func TestNewSeedIsFresh(t *testing.T) {
	seen := map[uint64]bool{}
	for range 64 {
		s := NewSeed()
		if s == 0 || s >= SeedLimit {
			t.Fatalf("seed %d out of [1, %d)", s, uint64(SeedLimit))
		}
		if seen[s] {
			t.Fatalf("seed %d drawn twice in 64 draws", s)
		}
		seen[s] = true
	}
}

// learner is a kernel that learned a batch: it answers as the reference
// on the specs it saw while learning, and as a deviating reference on
// every other. A spec is known by its content, whatever its ID.
type learner struct {
	right, wrong engine.Driver
	mu           sync.Mutex
	learning     bool
	known        map[[32]byte]bool
}

func (l *learner) Name() string           { return "learned-batch liar" }
func (l *learner) Capabilities() []string { return l.right.Capabilities() }

func (l *learner) Run(ctx context.Context, sc *scenarios.Scenario, env *fakes.Env) (*trajectories.Trajectory, error) {
	c := *sc
	c.ID = ""
	data, err := json.Marshal(&c)
	if err != nil {
		return nil, err
	}
	key := sha256.Sum256(data)
	l.mu.Lock()
	if l.learning {
		l.known[key] = true
	}
	known := l.known[key]
	l.mu.Unlock()
	if known {
		return l.right.Run(ctx, sc, env)
	}
	return l.wrong.Run(ctx, sc, env)
}

// TestALearnedBatchIsCaught: a kernel right only on the cases of one
// seed's batch passes that batch, as it passed the batch a version-derived
// seed gave every run, and fails a batch drawn from a fresh seed.
func TestALearnedBatchIsCaught(t *testing.T) {
	const learned, count = 424242, 60
	l := &learner{right: reference(nil), wrong: reference(deviation.Set{deviation.InvalidCallsEffective: true}),
		learning: true, known: map[[32]byte]bool{}}
	ctx := context.Background()
	if _, err := Run(ctx, Options{Reference: reference(nil), Impl: l, Seed: learned, Count: count}); err != nil {
		t.Fatal(err)
	}
	l.learning = false
	sum, err := Run(ctx, Options{Reference: reference(nil), Impl: l, Seed: learned, Count: count})
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Found) > 0 || sum.Cases < count {
		t.Fatalf("replaying the learned seed: %d of %d cases differ; the liar must pass the batch it learned", len(sum.Found), sum.Cases)
	}
	fresh := NewSeed()
	sum, err = Run(ctx, Options{Reference: reference(nil), Impl: l, Seed: fresh, Count: 2000, Stop: true, Shrunk: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Found) == 0 {
		t.Fatalf("seed %d: the learned-batch liar survived %d fresh cases", fresh, sum.Cases)
	}
	t.Logf("seed %d: caught at case %d", fresh, sum.Found[0].Case)
}
