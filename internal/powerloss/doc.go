// Package powerloss checks the reference journal against power cuts, not
// only process kills. A SIGKILL keeps everything the kernel was given; a
// power cut keeps only what was made durable. In the spirit of ALICE
// (Pillai et al., OSDI 2014) and CrashMonkey (Mohan et al., OSDI 2018),
// the journal runs on Disk, a model of a file system that records every
// write and sync; at each moment of a run the power is cut, every state
// the disk could be left in is built (unsynced data dropped, the last
// write torn at each sector boundary, a new file missing unless its
// directory was synced), and the run is resumed from each state and
// judged by the same rules as a kill (internal/crashpoint).
//
// It is reached from go test only, on purpose: it needs the journal's
// file system to be a model in the same process, which only the reference
// can be given. An implementation in another language is checked for
// kills by explore; its durability under power loss is its own to test.
package powerloss
