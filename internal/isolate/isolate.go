// Package isolate starts an implementation process on a new machine that
// mounts the journal (issue 50), as a container platform reschedules a
// pod: on Linux, each process gets new user, mount, PID, network, IPC and
// UTS namespaces; the machine's files as an image under overlays whose
// upper layers live on a tmpfs private to the process (its /tmp too); a
// fresh /proc, a fresh /dev/shm, a read-only /sys; lo up;
// a new session keyring and, through the user namespace, a user keyring of
// its own. The directories the runner names (Options.Carry: the journal
// volume, the fork pipes) are bound through at their own paths, the one
// volume carried from process to process; Options.Mask empties others. Killing the namespace's first
// process kills every process in it, and the layer dies with it.
//
// The machine is built by the runner's own executable, re-run as the
// namespaces' init before it execs the implementation (this package's init
// function, when the marker variable is set). Where the kernel refuses a
// part, the init falls back part by part and says which parts it built
// (Machine.Parts); a part missing is the caller's to report.
package isolate

import (
	"os"
	"os/exec"
	"slices"
)

// The parts of a machine, named stably: the report and --require observed
// speak of them.
const (
	PartPID     = "pid"     // a PID namespace: its init's death kills all
	PartMount   = "mount"   // a mount namespace and a root of its own
	PartFiles   = "files"   // every writable place in a layer of its own
	PartNetwork = "network" // a network namespace with lo up
	PartIPC     = "ipc"     // System V IPC, abstract sockets, /dev/shm
	PartKeyring = "keyring" // user and session kernel keyrings of its own
	PartProc    = "proc"    // a /proc that shows only the machine
)

// AllParts lists every part of a whole machine, in a stable order.
func AllParts() []string {
	return []string{PartPID, PartMount, PartFiles, PartNetwork, PartIPC, PartKeyring, PartProc}
}

// Missing lists the parts of AllParts that have is without.
func Missing(have []string) []string {
	var out []string
	for _, p := range AllParts() {
		if !slices.Contains(have, p) {
			out = append(out, p)
		}
	}
	return out
}

// NoIsolationEnv, when set to 1 in the runner's environment, forces the
// "no isolation available" path (for tests, and for machines where a
// namespace start is unwanted).
const NoIsolationEnv = "POLYLOOP_NO_ISOLATION"

// The variables that carry the init's orders; the init strips them before
// it execs the implementation. execEnv (the implementation's path) marks
// the re-run; carryEnv holds the directories to bind through and to mask
// (JSON, Options);
// statusEnv is the socket the init reports its parts on (and hands the
// listener of its seccomp filter through); levelEnv is set when the
// machine has no user namespace; syncsEnv asks for the filter (Options.Syncs).
const (
	execEnv   = "POLYLOOP_ISOLATE_EXEC"
	carryEnv  = "POLYLOOP_ISOLATE_CARRY"
	statusEnv = "POLYLOOP_ISOLATE_STATUS"
	levelEnv  = "POLYLOOP_ISOLATE_NO_USERNS"
	syncsEnv  = "POLYLOOP_ISOLATE_SYNCS"
)

// SyncCall is a syncfs(2) or sync(2) a process on a machine made, told to
// Options.Syncs while the process waits for it to return.
type SyncCall struct {
	// All is set for sync(2): every file system.
	All bool
	// Dev is, for syncfs(2), the device (st_dev) of the file system its
	// descriptor names.
	Dev uint64
	// Pid is the calling thread, in the runner's PID namespace; PidNS
	// its PID namespace (the /proc/<pid>/ns/pid link): the machine it
	// runs on.
	Pid   int
	PidNS string
}

// Options say how to build the machine.
type Options struct {
	// Carry lists the directories bound through at their own paths,
	// recursively (a FUSE mount under one is carried too): the only
	// files that cross from the runner to the machine and back.
	Carry []string `json:"carry"`
	// Mask lists directories of the image the machine sees empty (a
	// carried directory may lie below one): the runner's volume, whose
	// other journals a resuming process must not see.
	Mask []string `json:"mask"`
	// NoUserNS builds the machine without a user namespace, for a kernel
	// that refuses one (the runner retries so after EPERM): the keyring
	// part is then missing, and the mounts need the runner's privileges.
	NoUserNS bool `json:"-"`
	// Syncs, when set, is told of every syncfs and sync a process on the
	// machine makes, before the call goes on (a seccomp filter the init
	// installs; Machine.SyncsObserved says whether it did). It must
	// return soon: the caller waits.
	Syncs func(SyncCall) `json:"-"`
}

// Forced reports whether isolation was turned off by NoIsolationEnv.
func Forced() bool { return os.Getenv(NoIsolationEnv) == "1" }

// Wrap rewrites cmd, not yet started, to start on a new machine through
// the runner's executable, and returns the machine; nil, leaving cmd as it
// was, when isolation is unavailable here (another OS, forced off, or the
// runner's executable unknown). Start cmd with Machine.Start. A start the
// kernel refuses (EPERM, EINVAL) is the caller's to retry, with NoUserNS,
// then without Wrap.
func Wrap(cmd *exec.Cmd, o Options) *Machine {
	if Forced() || !supported {
		return nil
	}
	self, err := os.Executable()
	if err != nil {
		return nil
	}
	return wrap(cmd, self, o)
}
