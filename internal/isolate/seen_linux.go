package isolate

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ReadView reads the namespaces and mounts of process pid, and holds
// its namespaces open until Release: a namespace's number is reused once
// it is freed, so a machine compared with one that died must keep the
// dead one's numbers from being handed out again.
func ReadView(pid int) (*View, error) {
	m := &View{Pid: pid, NS: map[string]string{}, Mounts: map[string]mountSeen{}}
	ids, _, err := status(pid)
	if err != nil {
		return nil, fmt.Errorf("process %d: %w", pid, err)
	}
	m.Init = ids[len(ids)-1] == "1"
	for _, k := range nsKinds {
		path := fmt.Sprintf("/proc/%d/ns/%s", pid, k)
		f, err := os.Open(path)
		if err != nil {
			m.Release()
			return nil, fmt.Errorf("the %s namespace of process %d: %w", k, pid, err)
		}
		m.held = append(m.held, f)
		link, err := os.Readlink(path)
		if err != nil {
			m.Release()
			return nil, fmt.Errorf("the %s namespace of process %d: %w", k, pid, err)
		}
		m.NS[k] = link
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/mountinfo", pid))
	if err != nil {
		return nil, fmt.Errorf("the mounts of process %d: %w", pid, err)
	}
	if m.Shared, err = sharedWritable(pid); err != nil {
		m.Release()
		return nil, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		sep := slices.Index(f, "-")
		if len(f) < 5 || sep < 0 || sep+1 >= len(f) {
			continue
		}
		m.Mounts[unescapeField(f[4])] = mountSeen{fstype: f[sep+1], dev: f[2]}
	}
	return m, nil
}

// Gone waits up to limit for every process of m's PID namespace to be
// gone: a crashed machine's whole tree, daemons included, dies with its
// PID 1. Where m's process is that PID 1 it watches that one process:
// the kernel kills and reaps every other process of the namespace before
// its first one exits. It reports whether none is left.
func (m *View) Gone(limit time.Duration) bool {
	ns := m.NS["pid"]
	deadline := time.Now().Add(limit)
	for {
		if m.Init {
			if link, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", m.Pid)); err != nil || link != ns {
				return true
			}
		} else if len(inNamespace(ns)) == 0 {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(time.Millisecond)
	}
}

// inNamespace lists the processes in the PID namespace ns (a
// /proc/<pid>/ns/pid link).
func inNamespace(ns string) []int {
	var pids []int
	for _, p := range newestFirst() {
		if link, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", p)); err == nil && link == ns {
			pids = append(pids, p)
		}
	}
	return pids
}

// HostPidOf translates pid, as the fork server server (a pid in the
// runner's namespace) sees a child it forked onto a machine of its own,
// to the runner's namespace. The child is in a PID namespace below the
// server's, so its number at the server's level is found in NSpid, and
// it must descend from server: two servers in sibling namespaces may
// each have a child of one number.
func HostPidOf(server, pid int) (int, error) {
	level, err := nsLevel(server)
	if err != nil || level == 0 {
		// A server in the runner's own PID namespace says pids as the
		// runner sees them.
		return pid, err
	}
	// The child is below the server, so never in the runner's own PID
	// namespace: a readlink skips most processes before their status.
	// Newest first: the child was just forked.
	mine, _ := os.Readlink("/proc/self/ns/pid")
	want := strconv.Itoa(pid)
	for _, host := range newestFirst() {
		if ns, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", host)); err != nil || ns == mine {
			continue
		}
		ids, _, err := status(host)
		if err != nil || len(ids) <= level || ids[level] != want {
			continue
		}
		if slices.Contains(ancestors(host, server), server) {
			return host, nil
		}
	}
	return 0, fmt.Errorf("no process %d forked by the fork server %d", pid, server)
}

// newestFirst lists the processes of /proc, highest pid first.
func newestFirst() []int {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	pids := make([]int, 0, len(names))
	for _, n := range names {
		if p, err := strconv.Atoi(n); err == nil {
			pids = append(pids, p)
		}
	}
	slices.Sort(pids)
	slices.Reverse(pids)
	return pids
}

// nsLevel is the depth of pid's PID namespace below the runner's (0: the
// runner's own).
func nsLevel(pid int) (int, error) {
	ids, _, err := status(pid)
	if err != nil {
		return 0, fmt.Errorf("the fork server %d: %w", pid, err)
	}
	return len(ids) - 1, nil
}

// status reads a process's NSpid (outermost first) and PPid.
func status(pid int) (nspid []string, ppid int, err error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return nil, 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) > 1 && f[0] == "NSpid:":
			nspid = f[1:]
		case len(f) == 2 && f[0] == "PPid:":
			ppid, _ = strconv.Atoi(f[1])
		}
	}
	if nspid == nil {
		return nil, 0, fmt.Errorf("process %d: no NSpid in its status", pid)
	}
	return nspid, ppid, nil
}

// ancestors lists pid's parent, its parent's parent and so on, up to and
// including stop, or to the first process (at most 64).
func ancestors(pid, stop int) []int {
	var out []int
	for len(out) < 64 {
		_, ppid, err := status(pid)
		if err != nil || ppid <= 1 {
			break
		}
		out = append(out, ppid)
		if ppid == stop {
			break
		}
		pid = ppid
	}
	return out
}

// sharedWritable lists the writable shared mappings of process pid (a
// MAP_SHARED anonymous mapping, a /dev/shm file mapped), each as its
// device and inode: memory a fork server mapped so before forking is the
// same object in every child.
func sharedWritable(pid int) (map[string]bool, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return nil, fmt.Errorf("the memory maps of process %d: %w", pid, err)
	}
	out := map[string]bool{}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) >= 5 && len(f[1]) == 4 && f[1][1] == 'w' && f[1][3] == 's' {
			out[f[3]+" "+f[4]] = true
		}
	}
	return out, nil
}

// SharedNear is the writable shared memory of the processes near a fork
// server (server, a process the runner started) and the process child it
// forked: the ancestors of child up to server (a shell may stand in front
// of the process that forks), and, when child's parent is server itself
// (perhaps by orphaning), every process of server's PID namespace.
func SharedNear(server, child int) (*View, error) {
	out := &View{Shared: map[string]bool{}}
	mine, err1 := os.Readlink("/proc/self/ns/pid")
	theirs, err2 := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", server))
	if err := errors.Join(err1, err2); err != nil {
		return nil, err
	}
	// The ancestors of child up to server: what child maps shared by
	// inheritance, one of them mapped.
	pids := ancestors(child, server)
	if len(pids) > 0 && pids[0] == server && theirs != mine {
		// The child's parent is the server's first process: it forked
		// the child itself, or the child was orphaned and handed to it.
		// Then every process of the server's namespace is a suspect.
		pids = append(pids, inNamespace(theirs)...)
	}
	for _, p := range pids {
		shared, err := sharedWritable(p)
		if err != nil {
			continue // gone since
		}
		maps.Copy(out.Shared, shared)
	}
	return out, nil
}
