package isolate

import (
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// nsKinds are the namespaces a machine has of its own, as /proc/<pid>/ns
// names them.
var nsKinds = []string{"user", "mnt", "pid", "net", "ipc", "uts"}

// partOf names the part of the machine model (docs/limits.md, Isolation)
// a namespace kind stands for: the user namespace holds the user keyring,
// the UTS namespace the host name a network peer sees.
var partOf = map[string]string{"user": "keyring", "mnt": "mount", "pid": "pid", "net": "network", "ipc": "ipc", "uts": "network"}

// View is what the runner read of a process's machine from outside:
// its namespaces (/proc/<pid>/ns) and its mounts (/proc/<pid>/mountinfo).
type View struct {
	// Pid is the process read, in the runner's PID namespace; Init is
	// set when it is PID 1 of its own PID namespace.
	Pid  int
	Init bool
	NS   map[string]string
	// Mounts maps a mount point to its file system type and device
	// (major:minor), the topmost mount at that point.
	Mounts map[string]mountSeen
	// Shared holds the writable shared mappings (device and inode): a
	// child that shares one with its server shares memory with every
	// sibling, whatever its namespaces.
	Shared map[string]bool
	// held keeps the namespaces open (ReadView).
	held []io.Closer
}

// Release lets the namespaces ReadView held go.
func (m *View) Release() {
	if m == nil {
		return
	}
	for _, f := range m.held {
		f.Close()
	}
	m.held = nil
}

type mountSeen struct{ fstype, dev string }

// unescapeField undoes mountinfo's octal escapes (a space is \040).
func unescapeField(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// NotSeen lists the parts of the machine model (pid, mount, files,
// network, ipc, keyring, proc) the runner did not see isolated in m, the
// machine of a forked process, against the machines of others (its fork
// server's, the crashed process's): each namespace must be its own, "/"
// an overlay on a device none of the others has for its root, /dev/shm
// and /proc mounts none of the others share, journalDir a mount point
// of its own (bound through), each directory of mask hidden behind a
// tmpfs of its own, and no writable shared memory mapped in
// common with the others (counted as ipc). Nil means a new machine, seen.
func (m *View) NotSeen(journalDir string, mask []string, others ...*View) []string {
	var missing []string
	add := func(part string) {
		if !slices.Contains(missing, part) {
			missing = append(missing, part)
		}
	}
	for _, k := range nsKinds {
		for _, o := range others {
			if o != nil && o.NS[k] == m.NS[k] {
				add(partOf[k])
			}
		}
	}
	for key := range m.Shared {
		for _, o := range others {
			if o != nil && o.Shared[key] {
				add("ipc")
			}
		}
	}
	if root, ok := m.Mounts["/"]; !ok || root.fstype != "overlay" || m.sharesMount("/", others) {
		add("files")
	}
	if shm, ok := m.Mounts["/dev/shm"]; !ok || shm.fstype != "tmpfs" || m.sharesMount("/dev/shm", others) {
		add("files")
	}
	if journalDir != "" {
		if _, ok := m.Mounts[filepath.Clean(journalDir)]; !ok {
			add("files")
		}
	}
	for _, hidden := range mask {
		point := filepath.Clean(hidden)
		if x, ok := m.Mounts[point]; !ok || x.fstype != "tmpfs" || m.sharesMount(point, others) {
			add("files")
		}
	}
	if proc, ok := m.Mounts["/proc"]; !ok || proc.fstype != "proc" || m.sharesMount("/proc", others) {
		add("proc")
	}
	return missing
}

// sharesMount reports whether another machine has the same device mounted
// at point: a bind of its file system, not a fresh one.
func (m *View) sharesMount(point string, others []*View) bool {
	for _, o := range others {
		if o == nil {
			continue
		}
		if x, ok := o.Mounts[point]; ok && x.dev == m.Mounts[point].dev {
			return true
		}
	}
	return false
}
