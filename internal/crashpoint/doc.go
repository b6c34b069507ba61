// Package crashpoint explores every journal write point of the resume
// scenarios with real processes: a child runs the scenario and is killed
// with SIGKILL at one point, a second child resumes the journal, and the
// parent checks the resume invariants against an uninterrupted baseline.
//
// The harness lives in this package's tests (crashpoint_test.go); the
// exported pieces here are the child's entry point and the call log that
// lets the parent count handler and model calls across killed processes.
package crashpoint
