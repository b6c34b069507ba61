package isolate

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ReadMachine reads the namespaces and mounts of process pid, and holds
// its namespaces open until Release: a namespace's number is reused once
// it is freed, so a machine compared with one that died must keep the
// dead one's numbers from being handed out again.
func ReadMachine(pid int) (*Machine, error) {
	m := &Machine{NS: map[string]string{}, Mounts: map[string]mountSeen{}}
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
		m.Mounts[unescape(f[4])] = mountSeen{fstype: f[sep+1], dev: f[2]}
	}
	return m, nil
}

// Gone waits up to limit for every process of the PID namespace ns (a
// /proc/<pid>/ns/pid link) to be gone: a crashed machine's whole tree,
// daemons included, dies with its PID 1. It reports whether none is left.
func Gone(ns string, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	for {
		if !anyIn(ns) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// anyIn reports whether a live process (not a zombie, whose namespaces
// are already released) is in the PID namespace ns.
func anyIn(ns string) bool {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		if link, err := os.Readlink(d + "/ns/pid"); err == nil && link == ns {
			return true
		}
	}
	return false
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
	dirs, err := filepath.Glob("/proc/[0-9]*")
	if err != nil {
		return 0, err
	}
	// The child is below the server, so never in the runner's own PID
	// namespace: a readlink skips most processes before their status.
	mine, _ := os.Readlink("/proc/self/ns/pid")
	want := strconv.Itoa(pid)
	for _, d := range dirs {
		host, err := strconv.Atoi(filepath.Base(d))
		if err != nil {
			continue
		}
		if ns, err := os.Readlink(d + "/ns/pid"); err != nil || ns == mine {
			continue
		}
		ids, _, err := status(host)
		if err != nil || len(ids) <= level || ids[level] != want {
			continue
		}
		if descends(host, server) {
			return host, nil
		}
	}
	return 0, fmt.Errorf("no process %d forked by the fork server %d", pid, server)
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

// descends reports whether process pid has ancestor among its parents.
func descends(pid, ancestor int) bool {
	for range 64 {
		_, ppid, err := status(pid)
		if err != nil || ppid <= 1 {
			return false
		}
		if ppid == ancestor {
			return true
		}
		pid = ppid
	}
	return false
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
// server: every process in the PID namespace of server (a process the
// runner started, isolated in a PID namespace of its own), or, where
// server shares the runner's, server and its descendants' ancestors up to
// child. A fork server's command line may start it under a shell, so the
// process that forks is not always server itself.
func SharedNear(server, child int) (*Machine, error) {
	out := &Machine{Shared: map[string]bool{}}
	mine, err1 := os.Readlink("/proc/self/ns/pid")
	theirs, err2 := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", server))
	if err := errors.Join(err1, err2); err != nil {
		return nil, err
	}
	var pids []int
	if theirs != mine {
		dirs, _ := filepath.Glob("/proc/[0-9]*")
		for _, d := range dirs {
			if link, err := os.Readlink(d + "/ns/pid"); err == nil && link == theirs {
				n, _ := strconv.Atoi(filepath.Base(d))
				pids = append(pids, n)
			}
		}
	} else {
		for p := child; p > 1 && len(pids) < 64; {
			_, ppid, err := status(p)
			if err != nil {
				break
			}
			pids = append(pids, ppid)
			if ppid == server {
				break
			}
			p = ppid
		}
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
