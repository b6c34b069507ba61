package isolate

import (
	"maps"
	"slices"
	"testing"
)

// viewOf is a machine with namespaces numbered n and the mounts given
// as point, fstype, device triples.
func viewOf(n string, mounts ...string) *View {
	m := &View{NS: map[string]string{}, Mounts: map[string]mountSeen{}}
	for _, k := range nsKinds {
		m.NS[k] = k + ":[" + n + "]"
	}
	for i := 0; i+2 < len(mounts); i += 3 {
		m.Mounts[mounts[i]] = mountSeen{fstype: mounts[i+1], dev: mounts[i+2]}
	}
	return m
}

// TestNotSeen: a forked child is seen on a new machine only with every
// namespace its own, an overlay root and a fresh /proc and /dev/shm none
// of the others share, and the journal bound through; each shortfall
// names its part.
func TestNotSeen(t *testing.T) {
	server := viewOf("1", "/", "ext4", "254:0", "/proc", "proc", "0:21", "/dev/shm", "tmpfs", "0:44")
	server.Shared = map[string]bool{"00:01 3": true}
	crashed := viewOf("2", "/", "overlay", "0:50", "/proc", "proc", "0:51", "/dev/shm", "tmpfs", "0:52", "/j/old", "ext4", "254:0")
	good := func() *View {
		return viewOf("3", "/", "overlay", "0:60", "/proc", "proc", "0:61", "/dev/shm", "tmpfs", "0:62", "/j/new", "ext4", "254:0")
	}
	for _, tc := range []struct {
		name  string
		bend  func(m *View)
		parts []string
		mask  []string
	}{
		{"a new machine", func(*View) {}, nil, nil},
		{"the server's network", func(m *View) { m.NS["net"] = server.NS["net"] }, []string{"network"}, nil},
		{"the crashed one's host name", func(m *View) { m.NS["uts"] = crashed.NS["uts"] }, []string{"network"}, nil},
		{"the server's user namespace", func(m *View) { m.NS["user"] = server.NS["user"] }, []string{"keyring"}, nil},
		{"the crashed one's PID namespace", func(m *View) { m.NS["pid"] = crashed.NS["pid"] }, []string{"pid"}, nil},
		{"no overlay root", func(m *View) { m.Mounts["/"] = mountSeen{"ext4", "254:0"} }, []string{"files"}, nil},
		{"the crashed one's overlay", func(m *View) { m.Mounts["/"] = crashed.Mounts["/"] }, []string{"files"}, nil},
		{"the server's /dev/shm", func(m *View) { m.Mounts["/dev/shm"] = server.Mounts["/dev/shm"] }, []string{"files"}, nil},
		{"the journal not bound", func(m *View) { delete(m.Mounts, "/j/new") }, []string{"files"}, nil},
		{"the server's /proc bound", func(m *View) { m.Mounts["/proc"] = server.Mounts["/proc"] }, []string{"proc"}, nil},
		{"no /proc", func(m *View) { delete(m.Mounts, "/proc") }, []string{"proc"}, nil},
		{"memory the server mapped shared", func(m *View) { m.Shared = map[string]bool{"00:01 3": true} }, []string{"ipc"}, nil},
		{"shared memory of its own", func(m *View) { m.Shared = map[string]bool{"00:01 9": true} }, nil, nil},
		{"the volume masked", func(m *View) { m.Mounts["/vol"] = mountSeen{"tmpfs", "0:70"} }, nil, []string{"/vol/"}},
		{"the volume not masked", func(*View) {}, []string{"files"}, []string{"/vol"}},
		{"the volume bound, not masked", func(m *View) { m.Mounts["/vol"] = mountSeen{"ext4", "254:0"} }, []string{"files"}, []string{"/vol"}},
		{"a plain fork", func(m *View) {
			m.NS = maps.Clone(server.NS)
			m.Mounts = maps.Clone(server.Mounts)
		}, []string{"keyring", "mount", "pid", "network", "ipc", "files", "proc"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := good()
			tc.bend(m)
			got := m.NotSeen("/j/new/", tc.mask, server, crashed)
			slices.Sort(got)
			want := slices.Clone(tc.parts)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("not seen %v, want %v", got, want)
			}
		})
	}
}

// TestUnescape: mountinfo writes a space in a mount point as \040.
func TestUnescape(t *testing.T) {
	for in, want := range map[string]string{`/a\040b`: "/a b", `/plain`: "/plain", `/end\04`: `/end\04`} {
		if got := unescapeField(in); got != want {
			t.Errorf("unescapeField(%q) = %q, want %q", in, got, want)
		}
	}
}
