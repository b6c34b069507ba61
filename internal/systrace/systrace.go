// Package systrace records what an implementation does to its files, as
// the system calls it makes, by running it under strace(1) on Linux: each
// open, write, sync, truncate, rename and unlink, and the lines it writes
// to stdout (where its journal points are). Power-loss exploration
// (internal/powerloss) replays them on a modelled disk to build the states
// a power cut can leave, for any implementation in any language.
package systrace

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strconv"
	"strings"
)

// Calls are the system calls traced: every way bytes reach a file (write,
// pwrite64, writev, pwritev, pwritev2; sendfile, copy_file_range and
// splice, whose bytes strace cannot show; a shared writable mmap, whose
// stores it cannot see), the ones that change a file's size or its
// directory entry, the ones that make either durable (and
// sync_file_range, which does not), and writes to stdout.
const Calls = "trace=openat,open,creat,write,pwrite64,writev,pwritev,pwritev2,sendfile,sendfile64,copy_file_range,splice,mmap,fsync,fdatasync,sync_file_range,sync,syncfs,ftruncate,truncate,rename,renameat,renameat2,unlink,unlinkat,mkdir,mkdirat"

// Available says, in one sentence, why tracing cannot run here, or nil.
func Available() error {
	path, err := exec.LookPath("strace")
	if err != nil {
		return errors.New("power-loss exploration needs strace(1) on the PATH to see the implementation's writes and syncs (Linux; apt-get install strace), and there is none")
	}
	if out, err := exec.Command(path, "-qq", "-o", "/dev/null", "--", "true").CombinedOutput(); err != nil {
		return fmt.Errorf("power-loss exploration needs strace(1), which cannot trace here (%s): ptrace is not permitted (a container without CAP_SYS_PTRACE?)", strings.TrimSpace(string(out)))
	}
	return nil
}

// Command returns cmd run under strace -f, writing its trace to out: the
// same program, arguments, environment and directory. Strings are kept
// whole (up to 16 MiB, the protocol's longest line), file descriptors
// carry their paths (-y).
func Command(cmd *exec.Cmd, out string) *exec.Cmd {
	args := append([]string{"-f", "-y", "-x", "-qq", "-s", strconv.Itoa(16 << 20), "-o", out, "-e", Calls, "--"}, cmd.Args...)
	w := exec.Command("strace", args...)
	w.Path, _ = exec.LookPath("strace")
	w.Env, w.Dir = cmd.Env, cmd.Dir
	return w
}

// Kinds of Op.
const (
	Open     = "open"     // Path opened for writing; Create when O_CREAT made it, Trunc with O_TRUNC
	Write    = "write"    // Data written to Path at Offset (-1: at the file's offset or its end with O_APPEND)
	Sync     = "sync"     // fsync or fdatasync of Path (a file or a directory)
	SyncAll  = "sync_all" // sync or syncfs: everything durable
	Truncate = "truncate" // Path cut to Size
	Rename   = "rename"   // Path renamed to To
	Unlink   = "unlink"   // Path removed
	Stdout   = "stdout"   // Data written to file descriptor 1 on the runner's pipe (Path)
	// NotDurable is sync_file_range: it starts writeback of a range but
	// waits for no metadata and flushes no device cache, so by rule it
	// makes nothing durable (sync_file_range(2): "extremely dangerous").
	NotDurable = "not_durable"
	// Unmodelled is a call that reaches Path in a way the trace cannot
	// follow: Name is the call, Why says what is missing.
	Unmodelled = "unmodelled"
)

// Op is one traced system call that succeeded.
type Op struct {
	Pid    int
	Kind   string
	Path   string
	To     string
	Data   []byte
	Offset int64
	Size   int64
	Create bool
	Trunc  bool
	Append bool
	// Durable is set on an Open with O_SYNC or O_DSYNC (every write
	// through it is durable when it returns) and on a Write made with
	// RWF_SYNC or RWF_DSYNC.
	Durable bool
	// Name and Why describe an Unmodelled call.
	Name, Why string
}

// Parse reads strace -f -y -x output. Calls that failed are dropped; a
// call split by another thread's (<unfinished ...>, <... resumed>) is
// joined. A line to stdout counts where it started, so a journal point is
// after only the calls that returned before it was written; every other
// call counts where it returned. A call line it cannot read is an
// Unmodelled op naming its number, but for the last one, which strace may
// not have finished; a resumed call without its start is an error.
func Parse(r io.Reader) ([]Op, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 80<<20)
	type split struct {
		head string
		slot int // the index in ops kept for a line to stdout, or -1
	}
	pending := map[int]split{}
	var ops []Op
	var bad error // the last unreadable line, an error once another follows
	// unread is the last call line that could not be read: a call the
	// exploration cannot follow once another line follows it, dropped if
	// it is the last (strace may not have finished it).
	var unread *Op
	n := 0
	for sc.Scan() {
		n++
		if bad != nil {
			return nil, bad
		}
		if unread != nil {
			ops, unread = append(ops, *unread), nil
		}
		line := sc.Text()
		sp := strings.IndexByte(line, ' ')
		if sp < 0 {
			continue
		}
		pid, err := strconv.Atoi(line[:sp])
		if err != nil {
			continue // not a call line
		}
		rest := strings.TrimLeft(line[sp+1:], " ") // strace pads short pids
		if strings.HasPrefix(rest, "--- ") || strings.HasPrefix(rest, "+++ ") {
			continue // a signal or an exit
		}
		if head, ok := strings.CutSuffix(rest, " <unfinished ...>"); ok {
			p := split{head: head, slot: -1}
			if strings.HasPrefix(head, "write(1<") || strings.HasPrefix(head, "write(1,") {
				p.slot = len(ops)
				ops = append(ops, Op{}) // filled when it returns
			}
			pending[pid] = p
			continue
		}
		slot := -1
		if strings.HasPrefix(rest, "<... ") {
			i := strings.Index(rest, " resumed>")
			p, ok := pending[pid]
			if i < 0 || !ok {
				bad = fmt.Errorf("strace output line %d: a resumed call whose start the trace lacks: %.80s", n, rest)
				continue
			}
			rest, slot = p.head+rest[i+len(" resumed>"):], p.slot
			delete(pending, pid)
		}
		op, ok, err := parseCall(rest)
		if err != nil {
			// A call it cannot read is one it cannot follow: the
			// exploration says so rather than failing the kernel.
			name, _, _ := strings.Cut(rest, "(")
			unread = &Op{Pid: pid, Kind: Unmodelled, Name: name, Why: fmt.Sprintf("strace output line %d could not be read (%v)", n, err)}
			continue
		}
		if !ok {
			continue
		}
		op.Pid = pid
		if slot >= 0 {
			ops[slot] = op
		} else {
			ops = append(ops, op)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	// Drop the slots of lines to stdout that failed or never returned.
	return onlyTheProtocolStream(slices.DeleteFunc(ops, func(o Op) bool { return o.Kind == "" })), nil
}

// onlyTheProtocolStream keeps, of the writes to file descriptor 1, those on
// the runner's pipe, and turns the others into writes to their pipe: a
// kernel started through a wrapper (a relay, a launcher, a shell pipeline)
// has processes whose stdout is a pipe to that wrapper, which then writes
// the same lines again on the runner's, and each journal point would count
// twice. The runner's pipe is the one written last: every line a wrapper
// relays reaches the runner after the process that wrote it, and the last
// line of a run is its result, which the runner reads.
func onlyTheProtocolStream(ops []Op) []Op {
	stream, found := "", false
	for i := len(ops) - 1; i >= 0 && !found; i-- {
		if ops[i].Kind == Stdout {
			stream, found = ops[i].Path, true
		}
	}
	for i := range ops {
		if ops[i].Kind == Stdout && ops[i].Path != stream {
			ops[i].Kind = Write // to a pipe, never under a journal_dir
		}
	}
	return ops
}

// splitReturn cuts "name(args) = ret" into "name(args" and "ret". strace
// pads a short line's return to a column: ")              = 0".
func splitReturn(s string) (call, ret string, ok bool) {
	for i := strings.LastIndex(s, " = "); i >= 0; i = strings.LastIndex(s[:i], " = ") {
		if head := strings.TrimRight(s[:i], " "); strings.HasSuffix(head, ")") {
			return head[:len(head)-1], s[i+len(" = "):], true
		}
	}
	return "", "", false
}

// parseCall reads "name(args) = ret"; ok is false for a call that failed
// or one that changes nothing this package follows.
func parseCall(s string) (Op, bool, error) {
	call, ret, found := splitReturn(s)
	open := strings.IndexByte(call, '(')
	if !found || open < 0 {
		return Op{}, false, fmt.Errorf("expected a call and its return: %.80q", s)
	}
	name, args := call[:open], call[open+1:]
	if strings.HasPrefix(ret, "-") || strings.HasPrefix(ret, "?") {
		return Op{}, false, nil
	}
	a := &argReader{s: args}
	switch name {
	case "openat", "open", "creat":
		return openOp(name, ret, a)
	case "write", "pwrite64", "writev", "pwritev", "pwritev2":
		return writeOp(name, ret, a)
	case "sendfile", "sendfile64", "copy_file_range", "splice":
		// The bytes moved come from another file, a pipe or a memfd;
		// strace prints how many, never which.
		var path string
		if name == "sendfile" || name == "sendfile64" {
			_, path = a.fd()
		} else {
			a.fd()
			a.word()
			_, path = a.fd()
		}
		return Op{Kind: Unmodelled, Name: name, Path: path, Why: "strace shows how many bytes it moved into the file, not which"}, a.err == nil, a.err
	case "mmap":
		a.word()
		a.word()
		prot, flags := a.word(), a.word()
		_, path := a.fd()
		if !strings.Contains(flags, "MAP_SHARED") || !strings.Contains(prot, "PROT_WRITE") || path == "" {
			return Op{}, false, nil
		}
		return Op{Kind: Unmodelled, Name: "mmap(MAP_SHARED)", Path: path, Why: "stores into a shared mapping reach the file without a system call, so the trace cannot show them (nor what msync made durable)"}, a.err == nil, a.err
	case "sync_file_range":
		_, path := a.fd()
		return Op{Kind: NotDurable, Path: path}, a.err == nil, a.err
	case "fsync", "fdatasync":
		_, path := a.fd()
		return Op{Kind: Sync, Path: path}, a.err == nil, a.err
	case "sync", "syncfs":
		return Op{Kind: SyncAll}, true, nil
	case "ftruncate", "truncate":
		var path string
		if name == "ftruncate" {
			_, path = a.fd()
		} else {
			path = string(a.str())
		}
		size, _ := strconv.ParseInt(a.word(), 10, 64)
		return Op{Kind: Truncate, Path: path, Size: size}, a.err == nil, a.err
	case "rename", "renameat", "renameat2":
		return renameOp(name, a)
	case "unlink", "unlinkat":
		dir := ""
		if name == "unlinkat" {
			_, dir = a.fd()
		}
		return Op{Kind: Unlink, Path: join(dir, string(a.str()))}, a.err == nil, a.err
	}
	return Op{}, false, nil // mkdir: directories are taken as durable
}

// openOp reads an open for writing: what it creates or truncates, and
// O_SYNC/O_DSYNC, which make each write durable on return. An open for
// reading changes nothing this package follows.
func openOp(name, ret string, a *argReader) (Op, bool, error) {
	if name == "openat" {
		a.fd()
	}
	a.str()
	flags := a.word()
	if name == "creat" {
		flags = "O_CREAT|O_WRONLY|O_TRUNC"
	}
	if !strings.Contains(flags, "O_WRONLY") && !strings.Contains(flags, "O_RDWR") {
		return Op{}, false, a.err
	}
	_, path := parseFD(ret)
	return Op{Kind: Open, Path: path, Create: strings.Contains(flags, "O_CREAT"), Trunc: strings.Contains(flags, "O_TRUNC"), Append: strings.Contains(flags, "O_APPEND"),
		Durable: strings.Contains(flags, "O_SYNC") || strings.Contains(flags, "O_DSYNC")}, a.err == nil, a.err
}

// writeOp reads write, pwrite64, writev, pwritev and pwritev2: the bytes
// (cut to the count returned, for a short write), the offset of the
// positioned ones, RWF_SYNC/RWF_DSYNC of pwritev2, and a write to fd 1,
// which is the protocol stream, not a file.
func writeOp(name, ret string, a *argReader) (Op, bool, error) {
	fd, path := a.fd()
	op := Op{Kind: Write, Path: path, Offset: -1}
	if name == "write" || name == "pwrite64" {
		op.Data = a.str()
	} else {
		op.Data = a.iovec()
	}
	if name != "write" && name != "writev" {
		a.word() // the count, or iovcnt
		op.Offset, _ = strconv.ParseInt(a.word(), 10, 64)
	}
	if name == "pwritev2" {
		flags := a.word()
		op.Durable = strings.Contains(flags, "RWF_SYNC") || strings.Contains(flags, "RWF_DSYNC")
		if strings.Contains(flags, "RWF_APPEND") || op.Offset == -1 {
			op.Offset = -1
		}
	}
	if n, err := strconv.Atoi(strings.Fields(ret)[0]); err == nil && n < len(op.Data) {
		op.Data = op.Data[:n] // a short write
	}
	if fd == 1 {
		op.Kind = Stdout // Path: the pipe, for onlyTheProtocolStream
	}
	return op, a.err == nil, a.err
}

func renameOp(name string, a *argReader) (Op, bool, error) {
	var fromDir, toDir string
	if name != "rename" {
		_, fromDir = a.fd()
	}
	from := string(a.str())
	if name != "rename" {
		_, toDir = a.fd()
	}
	to := string(a.str())
	return Op{Kind: Rename, Path: join(fromDir, from), To: join(toDir, to)}, a.err == nil, a.err
}

func join(dir, p string) string {
	if strings.HasPrefix(p, "/") || dir == "" {
		return p
	}
	return dir + "/" + p
}

// parseFD reads "3</path>" into 3 and "/path".
func parseFD(s string) (int, string) {
	i := strings.IndexByte(s, '<')
	if i < 0 {
		n, _ := strconv.Atoi(strings.TrimSpace(s))
		return n, ""
	}
	n, _ := strconv.Atoi(s[:i])
	end := strings.LastIndexByte(s, '>')
	if end < i {
		end = len(s)
	}
	return n, s[i+1 : end]
}

// argReader walks a call's arguments: "3</p>", "\"string\"", words.
type argReader struct {
	s   string
	err error
}

func (a *argReader) skip() {
	a.s = strings.TrimPrefix(strings.TrimLeft(a.s, " "), ",")
	a.s = strings.TrimLeft(a.s, " ")
}

func (a *argReader) fd() (int, string) {
	a.skip()
	// "3</a/path>": the path may hold ", " but ends with ">, " or at the end.
	end := strings.Index(a.s, ">, ")
	if end < 0 {
		end = len(a.s) - 1
	}
	if end < 0 {
		a.fail("a file descriptor")
		return 0, ""
	}
	n, p := parseFD(a.s[:end+1])
	a.s = a.s[end+1:]
	return n, p
}

func (a *argReader) word() string {
	a.skip()
	i := strings.Index(a.s, ", ")
	if i < 0 {
		i = len(a.s)
	}
	w := a.s[:i]
	a.s = a.s[i:]
	return w
}

// iovec reads an array of iovecs, [{iov_base="..", iov_len=2}, ...], as
// the bytes they hold end to end.
func (a *argReader) iovec() []byte {
	a.skip()
	if !strings.HasPrefix(a.s, "[") {
		a.fail("an iovec array")
		return nil
	}
	a.s = a.s[1:]
	var out []byte
	for a.err == nil {
		a.s = strings.TrimLeft(a.s, " ,")
		if strings.HasPrefix(a.s, "]") {
			a.s = a.s[1:]
			return out
		}
		if !strings.HasPrefix(a.s, "{iov_base=") {
			a.fail("an iovec")
			return nil
		}
		a.s = a.s[len("{iov_base="):]
		out = append(out, a.str()...)
		end := strings.IndexByte(a.s, '}')
		if end < 0 {
			a.fail("the end of an iovec")
			return nil
		}
		a.s = a.s[end+1:]
	}
	return nil
}

// str reads a quoted string as strace -x prints it.
func (a *argReader) str() []byte {
	a.skip()
	if !strings.HasPrefix(a.s, "\"") {
		a.fail("a string")
		return nil
	}
	var out []byte
	i := 1
	for ; i < len(a.s) && a.s[i] != '"'; i++ {
		c := a.s[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		i++
		if i >= len(a.s) {
			break
		}
		switch e := a.s[i]; e {
		case 'n':
			out = append(out, '\n')
		case 't':
			out = append(out, '\t')
		case 'r':
			out = append(out, '\r')
		case 'v':
			out = append(out, '\v')
		case 'f':
			out = append(out, '\f')
		case 'x':
			if i+2 < len(a.s) {
				v, err := strconv.ParseUint(a.s[i+1:i+3], 16, 8)
				if err != nil {
					a.fail("a \\x escape")
				}
				out = append(out, byte(v))
				i += 2
			}
		default:
			if e >= '0' && e <= '7' {
				j := i
				for j < len(a.s) && j < i+3 && a.s[j] >= '0' && a.s[j] <= '7' {
					j++
				}
				v, _ := strconv.ParseUint(a.s[i:j], 8, 8)
				out = append(out, byte(v))
				i = j - 1
			} else {
				out = append(out, e)
			}
		}
	}
	a.s = strings.TrimPrefix(a.s[min(i+1, len(a.s)):], "...")
	return out
}

func (a *argReader) fail(what string) {
	if a.err == nil {
		a.err = fmt.Errorf("expected %s at %.40q", what, a.s)
	}
}
