package generate

import (
	"crypto/rand"
	"encoding/binary"
)

// BatchCount is how many generated cases run compares with the reference
// after the scenarios unless told otherwise: about two seconds over the
// protocol against serve-reference, a fraction of one in process
// (docs/generate.md, "The gate generates").
const BatchCount = 200

// BatchShrunk is how many of a batch's differences are shrunk; the rest
// are reported as drawn, so a badly broken implementation does not make
// the gate slow.
const BatchShrunk = 3

// SeedLimit bounds the seeds NewSeed draws: a seed is at most 12 digits,
// short enough to read off a report and type after --seed, and one of a
// trillion, too many for a kernel to learn the batches of.
const SeedLimit = 1_000_000_000_000

// NewSeed draws a fresh seed in [1, SeedLimit) from the operating
// system's random source: no run, version or clock lets anyone know in
// advance which cases a default batch will hold (issue 44: a batch seeded
// from the suite's version could be learned and passed without being
// right). The report names it, and --seed replays it.
func NewSeed() uint64 {
	var b [8]byte
	// crypto/rand.Read does not fail on the platforms Go supports (it
	// crashes the program rather than return weak bytes).
	_, _ = rand.Read(b[:])
	return 1 + binary.LittleEndian.Uint64(b[:])%(SeedLimit-1)
}
