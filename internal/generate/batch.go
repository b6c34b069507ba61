package generate

import "hash/fnv"

// BatchCount is how many generated cases run compares with the reference
// after the scenarios unless told otherwise: about two seconds over the
// protocol against serve-reference, a fraction of one in process
// (docs/generate.md, "The gate generates").
const BatchCount = 200

// BatchShrunk is how many of a batch's differences are shrunk; the rest
// are reported as drawn, so a badly broken implementation does not make
// the gate slow.
const BatchShrunk = 3

// SeedOf derives a batch's seed from a version (run gives the suite's):
// the same suite draws the same cases in every CI run, and a new version
// draws new ones.
func SeedOf(version string) uint64 {
	h := fnv.New64a()
	h.Write([]byte("polyloop-conform generated batch " + version))
	return h.Sum64() % 1_000_000_000
}
