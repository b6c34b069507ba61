// Package conformance is the ginkgo suite: one spec per scenario, grouped
// by family, labelled with its level and required capabilities.
//
// By default it runs the in-process reference kernel. Set POLYLOOP_IMPL to
// a command line to run an implementation over the stdio protocol instead.
// Regenerate goldens with: go test ./conformance -args -update
// (add -allow-shrink to accept deleted fields or steps).
package conformance
