// Package fakes holds the scripted stand-ins a scenario runs against: a
// model that answers per step, tool handlers that return, fail, report an
// environment error or block until cancelled, and a scripted project
// executor. It speaks the runner's language, the wire format's types
// (trajectories, scenarios), and knows nothing of the reference kernel:
// the same fakes answer an implementation over the protocol and the
// reference in process (through internal/refdriver's adapter).
//
// An Env is created per scenario run and records everything that happened
// to it (model calls and what they were sent, handler calls and releases),
// so the runner, not the implementation under test, is the source of truth
// for what the outside world saw. Env is safe for concurrent use.
package fakes
