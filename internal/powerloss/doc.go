// Package powerloss checks journals against power cuts, not only process
// kills. A SIGKILL keeps everything the kernel was given; a power cut
// keeps only what was made durable. In the spirit of ALICE (Pillai et
// al., OSDI 2014) and CrashMonkey (Mohan et al., OSDI 2018), Disk models
// a file system that records every write and sync; at a moment of a run
// the power is cut, the states the disk could be left in are built
// (unsynced data dropped, torn or kept, a new name or a removal lost
// until its directory is synced), and the run is resumed from each and
// judged by the same rules as a kill (internal/crashpoint).
//
// Three ways in: Explore runs the reference's journal on Disk in this
// process (go test); ExploreRecorded judges any implementation whose
// journal_dir is on the runner's FUSE recorder (internal/fsrecord), by
// the calls it made on the wire before each cut; ExploreTraced, the
// fallback, replays what strace saw of one.
package powerloss
