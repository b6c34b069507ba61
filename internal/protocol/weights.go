package protocol

import (
	"crypto/rand"
	"encoding/binary"
)

// measureWeights is the runner's measure, drawn once when the runner
// starts and never changed: every exchange of one runner weighs alike.
var measureWeights = drawWeights()

// drawWeights draws the runner's measure: a weight from 2 to 9 for each
// block type, new for every runner (a run, explore, generate), told to
// nobody. The runner answers measure_call with the block's code points
// times its type's weight, so its answers differ from the default
// measure's, and a kernel that reports a context_size it did not get from
// the runner block by block is caught (engine.Observed). One draw per
// runner process, not per scenario: explore holds a resumed run to the
// same implementation's uninterrupted one, and both must be measured
// alike.
func drawWeights() map[string]int {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	n := binary.LittleEndian.Uint64(b[:])
	out := make(map[string]int, len(blockTypes))
	for _, t := range blockTypes {
		out[t] = 2 + int(n%8)
		n /= 8
	}
	return out
}
