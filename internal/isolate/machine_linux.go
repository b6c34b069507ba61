package isolate

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// stage is where the init mounts the tmpfs that holds the machine's
// layers and root before it pivots into that root. It covers the runner's
// /tmp in the init's mount namespace only: /tmp, the carried directories
// and the working directory are held open first and read through their
// descriptors.
const stage = "/tmp"

// oldRoot is where pivot_root puts the runner's root, detached at once.
const oldRoot = ".polyloop-old-root"

// builder builds one machine inside the init's new namespaces.
type builder struct {
	carry  []string
	mask   []string
	userns bool
	// tmp reads the runner's /tmp, which the stage covers.
	tmp held
	// mountpoints are the runner's mount points (from mountinfo), read
	// before the stage covers /tmp: an overlay's lower layer must hold
	// none below it (a user namespace locks them).
	mountpoints []string
	layers      int // overlays made, naming their upper directories
}

// build builds what the kernel allows and returns the parts built, and the
// TMPDIR to give the implementation when its files are not isolated (a
// directory on the fresh /dev/shm, as before issue 50).
func (b *builder) build() (parts []string, tmpdir string) {
	parts = []string{PartPID}
	if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_SLAVE, ""); err != nil {
		// Without a mount namespace of its own nothing is mounted.
		return append(parts, b.late()...), ""
	}
	root, err := b.root()
	if err == nil {
		err = b.enter(root)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "polyloop-conform isolation: no root of its own for the machine, its files are the runner's (%v)\n", err)
		syscall.Unmount(stage, syscall.MNT_DETACH)
		tmpdir = b.fallback(&parts)
		return append(parts, b.late()...), tmpdir
	}
	parts = append(parts, PartMount, PartFiles, PartIPC, PartProc)
	return append(parts, b.late()...), ""
}

// late joins a new session keyring and brings lo up: the parts that need
// no mount.
func (b *builder) late() []string {
	var parts []string
	if err := newSessionKeyring(); err != nil {
		fmt.Fprintf(os.Stderr, "polyloop-conform isolation: no session keyring of its own (%v)\n", err)
	} else if b.userns {
		// The user keyring is the user namespace's (Linux 5.3): only a
		// user namespace makes it the machine's own.
		parts = append(parts, PartKeyring)
	}
	if err := loopbackUp(); err == nil {
		parts = append(parts, PartNetwork)
	} else {
		fmt.Fprintf(os.Stderr, "polyloop-conform isolation: lo stays down (%v)\n", err)
	}
	return parts
}

// fallback gives a process that keeps the runner's root what it can: a
// fresh /dev/shm with a TMPDIR in it, and a fresh /proc.
func (b *builder) fallback(parts *[]string) string {
	tmpdir := ""
	if err := syscall.Mount("tmpfs", "/dev/shm", "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, "mode=1777"); err == nil {
		*parts = append(*parts, PartIPC)
		if err := os.Mkdir("/dev/shm/tmp", 0o1777); err == nil {
			tmpdir = "/dev/shm/tmp"
		}
	}
	if err := syscall.Mount("proc", "/proc", "proc", syscall.MS_NOSUID|syscall.MS_NODEV|syscall.MS_NOEXEC, ""); err == nil {
		*parts = append(*parts, PartProc)
	}
	return tmpdir
}

// held is a directory kept open across the stage's mount, bound from its
// descriptor.
type held struct {
	path string
	fd   int
}

func (h held) source() string { return "/proc/self/fd/" + strconv.Itoa(h.fd) }

func hold(path string) (held, error) {
	fd, err := syscall.Open(path, unix.O_PATH|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return held{}, fmt.Errorf("open %s: %w", path, err)
	}
	return held{path, fd}, nil
}

// root builds the machine's root in a tmpfs on the stage and returns it:
// every top-level entry of the runner's root under an overlay of its own,
// fresh /proc and /dev/shm, /sys read-only, the masked directories empty
// and the carried ones bound through.
func (b *builder) root() (string, error) {
	var err error
	if b.mountpoints, err = mountpoints(); err != nil {
		return "", err
	}
	var carried []held
	for _, p := range b.carry {
		h, err := hold(p)
		if err != nil {
			return "", err
		}
		carried = append(carried, h)
	}
	cwd, _ := os.Getwd()
	here, err := hold(cwd)
	if err != nil {
		return "", err
	}
	if b.tmp, err = hold("/tmp"); err != nil {
		return "", err
	}
	if err := syscall.Mount("tmpfs", stage, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, "mode=0755"); err != nil {
		return "", fmt.Errorf("mount a tmpfs for the machine's layers: %w", err)
	}
	root := filepath.Join(stage, "root")
	for _, d := range []string{root, filepath.Join(stage, "layers")} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return "", err
		}
	}
	// pivot_root needs the new root to be a mount point.
	if err := syscall.Mount(root, root, "", syscall.MS_BIND, ""); err != nil {
		return "", fmt.Errorf("bind the machine's root: %w", err)
	}
	if err := b.place("/", "/", root, 0); err != nil {
		return "", err
	}
	if err := b.system(root); err != nil {
		return "", err
	}
	for _, m := range b.mask {
		// An empty directory of the layer, where the carried ones below
		// it are bound.
		if err := syscall.Mount("tmpfs", root+m, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, "mode=0755"); err != nil {
			return "", fmt.Errorf("mask %s: %w", m, err)
		}
	}
	for _, h := range carried {
		if err := bindAt(h, root); err != nil {
			return "", err
		}
	}
	if _, err := os.Stat(root + cwd); err != nil {
		// The working directory is nowhere in the image: an overlay of
		// it of its own.
		if err := os.MkdirAll(root+cwd, 0o755); err != nil {
			return "", err
		}
		if err := b.overlay(here.source(), root+cwd); err != nil {
			return "", fmt.Errorf("the working directory %s: %w", cwd, err)
		}
	}
	return root, nil
}

// system makes the machine's /proc, /sys and /dev.
func (b *builder) system(root string) error {
	for _, d := range []string{"proc", "sys", "dev"} {
		if err := os.Mkdir(filepath.Join(root, d), 0o755); err != nil {
			return err
		}
	}
	const quiet = syscall.MS_NOSUID | syscall.MS_NODEV | syscall.MS_NOEXEC
	if err := syscall.Mount("proc", filepath.Join(root, "proc"), "proc", quiet, ""); err != nil {
		return fmt.Errorf("mount a fresh /proc: %w", err)
	}
	if err := syscall.Mount("sysfs", filepath.Join(root, "sys"), "sysfs", quiet|syscall.MS_RDONLY, ""); err != nil {
		// A fresh sysfs needs a fully visible one in the namespace;
		// the runner's, read-only, shows the same.
		if err := bindReadOnly("/sys", filepath.Join(root, "sys")); err != nil {
			return fmt.Errorf("/sys: %w", err)
		}
	}
	if err := syscall.Mount("/dev", filepath.Join(root, "dev"), "", syscall.MS_BIND|syscall.MS_REC, ""); err != nil {
		return fmt.Errorf("bind /dev: %w", err)
	}
	if err := syscall.Mount("tmpfs", filepath.Join(root, "dev", "shm"), "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, "mode=1777"); err != nil {
		return fmt.Errorf("mount a fresh /dev/shm: %w", err)
	}
	return nil
}

// place puts every entry of the directory src (read there; at is its path
// in the runner's root) at dst in the machine's: a directory with no mount
// point below it under an overlay of its own (read-only where the overlay
// is refused), one with mount points below it as a directory of the layer
// whose entries are placed in turn, a symbolic link as itself, any other
// file bound read-only. The runner's /proc, /sys and /dev are not placed:
// the machine gets its own; a carried or masked directory is an empty
// directory of the layer, mounted on later.
func (b *builder) place(src, at, dst string, depth int) error {
	entries, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	for _, e := range entries {
		s, a, d := filepath.Join(src, e.Name()), filepath.Join(at, e.Name()), filepath.Join(dst, e.Name())
		if a == "/tmp" {
			s = b.tmp.source() // under the stage
		}
		if err := b.placeOne(e, s, a, d, depth); err != nil {
			if _, gone := os.Lstat(s); errors.Is(gone, os.ErrNotExist) {
				continue // removed since it was listed (a busy /tmp)
			}
			return err
		}
	}
	return nil
}

// placeOne places the entry e of place, read at s (at in the runner's
// root), at d.
func (b *builder) placeOne(e os.DirEntry, s, a, d string, depth int) error {
	switch {
	case a == "/proc" || a == "/sys" || a == "/dev":
		return nil
	case slices.Contains(b.carry, a) || slices.Contains(b.mask, a):
		return os.Mkdir(d, 0o755)
	case e.Type()&os.ModeSymlink != 0:
		target, err := os.Readlink(s)
		if err != nil {
			return err
		}
		return os.Symlink(target, d)
	case e.IsDir():
		return b.placeDir(s, a, d, depth)
	default:
		return bindFile(s, d)
	}
}

// placeDir places the directory s (at in the runner's root) at d (place).
func (b *builder) placeDir(s, at, d string, depth int) error {
	info, err := os.Stat(s)
	if err != nil {
		return nil // gone since it was listed
	}
	if err := os.Mkdir(d, info.Mode().Perm()); err != nil {
		return err
	}
	os.Chmod(d, info.Mode()&(os.ModePerm|os.ModeSticky)) // past the umask: /tmp is 1777
	if !b.mountsBelow(at) {
		if err := b.overlay(s, d); err == nil {
			return nil
		}
		return bindReadOnly(s, d)
	}
	if depth >= 4 {
		return bindReadOnly(s, d)
	}
	return b.place(s, at, d, depth+1)
}

// mountsBelow reports whether a mount point lies strictly below dir,
// outside the carried and masked directories (the machine does not see
// those mounts through dir).
func (b *builder) mountsBelow(dir string) bool {
	for _, m := range b.mountpoints {
		if strings.HasPrefix(m, dir+"/") && !b.covered(m) {
			return true
		}
	}
	return false
}

// covered reports whether p is a carried or masked directory or lies
// below one.
func (b *builder) covered(p string) bool {
	for _, c := range append(slices.Clip(b.carry), b.mask...) {
		if p == c || strings.HasPrefix(p, c+"/") {
			return true
		}
	}
	return false
}

// overlay mounts an overlay at dst whose lower layer is lower and whose
// upper and work directories are new ones on the stage's tmpfs.
func (b *builder) overlay(lower, dst string) error {
	if strings.ContainsAny(lower, ",:\\") {
		return fmt.Errorf("%s: a character overlay options cannot hold", lower)
	}
	b.layers++
	upper := filepath.Join(stage, "layers", "u"+strconv.Itoa(b.layers))
	work := filepath.Join(stage, "layers", "w"+strconv.Itoa(b.layers))
	for _, d := range []string{upper, work} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return err
		}
	}
	opts := "lowerdir=" + lower + ",upperdir=" + upper + ",workdir=" + work
	// In a user namespace the overlay keeps its own attributes in user.*
	// extended attributes (userxattr); without one, in trusted.*.
	err := syscall.Mount("overlay", dst, "overlay", 0, opts+",userxattr")
	if err != nil {
		err = syscall.Mount("overlay", dst, "overlay", 0, opts)
	}
	if err != nil {
		return fmt.Errorf("overlay %s: %w", lower, err)
	}
	return nil
}

// bindReadOnly binds src, recursively, at dst, read-only.
func bindReadOnly(src, dst string) error {
	if err := syscall.Mount(src, dst, "", syscall.MS_BIND|syscall.MS_REC, ""); err != nil {
		return fmt.Errorf("bind %s: %w", src, err)
	}
	attr := &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
	if err := unix.MountSetattr(-1, dst, unix.AT_RECURSIVE, attr); err != nil {
		return fmt.Errorf("make %s read-only: %w", dst, err)
	}
	return nil
}

// bindFile binds the file src read-only at dst, a new empty file.
func bindFile(src, dst string) error {
	f, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	f.Close()
	return bindReadOnly(src, dst)
}

// bindAt binds the held directory, recursively, at its own path under root,
// as a slave: a mount the runner makes below it later (a FUSE journal)
// reaches the machine where the runner's mounts are shared.
func bindAt(h held, root string) error {
	dst := root + h.path
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	if err := syscall.Mount(h.source(), dst, "", syscall.MS_BIND|syscall.MS_REC, ""); err != nil {
		return fmt.Errorf("carry %s: %w", h.path, err)
	}
	syscall.Mount("", dst, "", syscall.MS_REC|syscall.MS_SLAVE, "")
	return nil
}

// enter pivots into root and lets the runner's root go; the working
// directory stays the same path.
func (b *builder) enter(root string) error {
	cwd, _ := os.Getwd()
	old := filepath.Join(root, oldRoot)
	if err := os.Mkdir(old, 0o700); err != nil {
		return err
	}
	if err := unix.PivotRoot(root, old); err != nil {
		return fmt.Errorf("pivot_root: %w", err)
	}
	if err := os.Chdir("/"); err != nil {
		return err
	}
	if err := syscall.Unmount("/"+oldRoot, syscall.MNT_DETACH); err != nil {
		return fmt.Errorf("let the runner's root go: %w", err)
	}
	os.Remove("/" + oldRoot)
	if err := os.Chdir(cwd); err != nil {
		return fmt.Errorf("the working directory on the machine: %w", err)
	}
	return nil
}

// mountpoints lists the mount points of the init's mount namespace.
func mountpoints() ([]string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			return nil, errors.New("mountinfo: a line of fewer than 5 fields")
		}
		out = append(out, unescape(fields[4]))
	}
	return out, sc.Err()
}

// unescape undoes mountinfo's octal escapes (\040 for a space).
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
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

// loopbackUp brings the network namespace's lo up.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// newSessionKeyring joins a new anonymous session keyring (a NULL name:
// a named one would be shared with whoever joins that name).
func newSessionKeyring() error {
	_, _, errno := unix.Syscall(unix.SYS_KEYCTL, unix.KEYCTL_JOIN_SESSION_KEYRING, 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}
