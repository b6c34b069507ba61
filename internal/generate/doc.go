// Package generate makes scenarios from a seed and compares an
// implementation with the reference on them (differential testing, in the
// spirit of QuickCheck's state-machine tests and Csmith): each case runs
// on the reference in process and on the implementation; the reference's
// trajectory is the golden, compared with the comparison classes, so a
// case never fails on wording. A difference is shrunk (fewer tools, steps
// and faults, simpler schemas and outputs) while it persists, and written
// as a scenario with the reference's trajectory and an expect block for a
// person to fill from the design.
//
// The distribution leans to the edges of the decisions: caps of 1,
// a completing tool on the last allowed step, both completions in one
// step, calls that fail validation, repaired and unparseable output, and
// faults (a failing sink, a crash at a journal point, cancellation).
package generate
