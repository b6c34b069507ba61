// Package journal is the reference kernel's crash-safe step journal: one
// append-only file per run, one checksummed JSON line per record, each
// record fsynced before the step moves on.
//
// Implements 0002.D1 (intent before the action, result after), 0002.D2 (the
// library writes the run's end), 0002.D5 (a torn tail is reported, records
// before it stay usable) and 0002.D6 (write errors surface; the journal is
// never silently shorter).
package journal
