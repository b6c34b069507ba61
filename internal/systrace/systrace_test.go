package systrace

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const sample = `101 mkdir("/j/run", 0777) = 0
101 openat(AT_FDCWD</tmp>, "/j/run/journal", O_WRONLY|O_CREAT|O_APPEND|O_CLOEXEC, 0666) = 3</j/run/journal>
101 openat(AT_FDCWD</tmp>, "/etc/passwd", O_RDONLY|O_CLOEXEC) = 4</etc/passwd>
102 write(3</j/run/journal>, "ab\"c\\\n" <unfinished ...>
101 write(1<pipe:[77]>, "{\"type\":\"journal_point\"}\n", 25) = 25
102 <... write resumed>, 6) = 6
101 write(3</j/run/journal>, "\x01\xe4\xb8\xad", 4) = 2
101  fsync(3</j/run/journal>) = 0
101 fdatasync(5</j/run>) = -1 EINVAL (Invalid argument)
101 pwrite64(3</j/run/journal>, "xy", 2, 7) = 2
101 ftruncate(3</j/run/journal>, 5) = 0
101 renameat2(AT_FDCWD</j>, "run/a", AT_FDCWD</j>, "/j/run/b", RENAME_NOREPLACE) = 0
101 --- SIGKILL {si_signo=SIGKILL} ---
`

func TestParse(t *testing.T) {
	ops, err := Parse(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range ops {
		got = append(got, o.Kind+" "+o.Path+" "+string(o.Data)+" "+o.To)
	}
	want := []string{
		"open /j/run/journal  ",
		"stdout  {\"type\":\"journal_point\"}\n ",
		"write /j/run/journal ab\"c\\\n ", // a split call counts when it returns
		"write /j/run/journal \x01\xe4 ",
		"sync /j/run/journal  ",
		"write /j/run/journal xy ",
		"truncate /j/run/journal  ",
		"rename /j/run/a  /j/run/b",
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("ops\n%q\nwant\n%q", got, want)
	}
	if !ops[0].Create || !ops[0].Append || ops[5].Offset != 7 || ops[6].Size != 5 {
		t.Fatalf("flags, offset or size lost: %+v", ops)
	}
}

// TestTraceLive runs a process that writes, syncs a file and its
// directory under strace and reads the trace back.
func TestTraceLive(t *testing.T) {
	if err := Available(); err != nil {
		t.Skip(err)
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("the live trace writes with python3, and there is none")
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "trace")
	script := `import os,sys
d=sys.argv[1]
with open(os.path.join(d,"j"),"ab") as f:
    f.write("é\n\"x\"".encode()); f.flush(); os.fsync(f.fileno())
fd=os.open(d, os.O_RDONLY); os.fsync(fd)
`
	cmd := Command(exec.Command(py, "-c", script, dir), out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ops, err := Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	var mine []string
	for _, o := range ops {
		if strings.HasPrefix(o.Path, dir+"/j") || o.Path == dir {
			mine = append(mine, o.Kind+":"+string(o.Data))
		}
	}
	if strings.Join(mine, " ") != "open: write:é\n\"x\" sync: sync:" {
		t.Fatalf("traced %q", mine)
	}
}
