/*
 * forkserver.c: a native fork server in front of a kernel (KERNEL ARGS...,
 * normally `polyloop-conform serve-reference`), to measure and test the
 * fork path of a native implementation (docs/protocol.md, "Fork server").
 * Linux only; build: cc -O2 -o forkserver forkserver.c
 *
 * At hello it starts the kernel, relays the hello and answers with the
 * kernel's capabilities and fork-server. Then:
 *   - a fork: it kills that kernel and serves forks from then on; each
 *     child opens the runner's pipes and execs the kernel, on a machine of
 *     its own when the fork asks for one (docs/implementing.md, "A forked
 *     child on a new machine", steps 1 to 9, in that order);
 *   - anything else (--no-fork: a run): it relays the protocol between the
 *     runner and that kernel until either ends.
 * FORKSERVER_SKIP=network leaves the new network namespace out, for the
 * test that the runner sees it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static char **kernel;

static void die(const char *what);

/* mask holds the fork's machine.mask: directories hidden behind an empty
 * tmpfs before the journal is bound through. */
static char mask[16][1024];
static int nmask;

/* read_mask fills mask from the "mask":[...] array after from. */
static void read_mask(const char *from) {
	const char *p = strstr(from, "\"mask\":[");
	nmask = 0;
	if (!p)
		return;
	p += strlen("\"mask\":[");
	while (*p == '"' && nmask < 16) {
		const char *end = strchr(p + 1, '"');
		if (!end || (size_t)(end - p - 1) >= sizeof mask[0] || memchr(p + 1, '\\', (size_t)(end - p - 1)))
			die("a mask path the server cannot read");
		memcpy(mask[nmask], p + 1, (size_t)(end - p - 1));
		mask[nmask++][end - p - 1] = 0;
		p = end + 1;
		if (*p == ',')
			p++;
	}
}

static void die(const char *what) {
	fprintf(stderr, "forkserver: %s: %s\n", what, strerror(errno));
	_exit(1);
}

static int write_all(int fd, const char *p, size_t n) {
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* A line reader over one fd, keeping what it read past the line. */
struct reader {
	int fd;
	char buf[1 << 20];
	size_t n;
};

/* next_line returns a malloc'd line (with its newline), or NULL at EOF. */
static char *next_line(struct reader *r) {
	for (;;) {
		char *nl = memchr(r->buf, '\n', r->n);
		if (nl) {
			size_t len = (size_t)(nl - r->buf) + 1;
			char *line = malloc(len + 1);
			memcpy(line, r->buf, len);
			line[len] = 0;
			memmove(r->buf, r->buf + len, r->n - len);
			r->n -= len;
			return line;
		}
		if (r->n == sizeof r->buf)
			return NULL;
		ssize_t got = read(r->fd, r->buf + r->n, sizeof r->buf - r->n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return NULL;
		r->n += (size_t)got;
	}
}

/* string_field copies the JSON string value of "key" found after from
 * into out (no escapes: the runner's paths have none); 0 if absent. */
static int string_field(const char *from, const char *key, char *out, size_t size) {
	char pat[64];
	snprintf(pat, sizeof pat, "\"%s\":\"", key);
	const char *p = strstr(from, pat);
	if (!p)
		return 0;
	p += strlen(pat);
	const char *end = strchr(p, '"');
	if (!end || (size_t)(end - p) >= size || memchr(p, '\\', (size_t)(end - p)))
		return 0;
	memcpy(out, p, (size_t)(end - p));
	out[end - p] = 0;
	return 1;
}

static void mnt(const char *src, const char *dst, const char *type, unsigned long flags, const char *data) {
	if (mount(src, dst, type, flags, data) < 0) {
		fprintf(stderr, "forkserver: mount %s on %s: %s\n", type ? type : src, dst, strerror(errno));
		_exit(1);
	}
}

static void mkdirs(const char *path) {
	char p[4096];
	snprintf(p, sizeof p, "%s", path);
	for (char *s = p + 1; *s; s++) {
		if (*s == '/') {
			*s = 0;
			mkdir(p, 0755);
			*s = '/';
		}
	}
	mkdir(p, 0755);
}

/* under reports whether path is point or below it. */
static int under(const char *path, const char *point) {
	size_t n = strlen(point);
	if (strcmp(point, "/") == 0)
		return 1;
	return strncmp(path, point, n) == 0 && (path[n] == 0 || path[n] == '/');
}

/* overlay mounts an overlay of lower with its writes under /dev/shm/name
 * and returns its merged directory. */
static char *overlay(const char *lower, const char *name) {
	static char merged[4096];
	char upper[4096], work[4096], opts[16384];
	snprintf(upper, sizeof upper, "/dev/shm/%s/upper", name);
	snprintf(work, sizeof work, "/dev/shm/%s/work", name);
	snprintf(merged, sizeof merged, "/dev/shm/%s/merged", name);
	mkdirs(upper);
	mkdirs(work);
	mkdirs(merged);
	snprintf(opts, sizeof opts, "lowerdir=%s,upperdir=%s,workdir=%s", lower, upper, work);
	if (mount("overlay", merged, "overlay", 0, opts) < 0)
		return NULL;
	return merged;
}

/* submounts binds the mounts below / into root: an overlay where the
 * working directory or /tmp is, a read-only bind elsewhere. */
static void submounts(const char *root, const char *cwd) {
	FILE *f = fopen("/proc/self/mountinfo", "r");
	char line[8192], done[64][512];
	int ndone = 0, i = 0;
	if (!f)
		die("mountinfo");
	while (fgets(line, sizeof line, f)) {
		char point[512], type[64], target[4096];
		char *sep = strstr(line, " - ");
		if (!sep || sscanf(line, "%*s %*s %*s %*s %511s", point) != 1 || sscanf(sep + 3, "%63s", type) != 1)
			continue;
		i++;
		int skip = strcmp(point, "/") == 0 || under(point, "/proc") || under(point, "/dev") || under(point, "/sys") ||
			   strcmp(type, "proc") == 0 || strchr(point, '\\');
		for (int j = 0; j < ndone && !skip; j++)
			skip = under(point, done[j]);
		snprintf(target, sizeof target, "%s%s", root, point);
		struct stat st;
		if (skip || stat(point, &st) < 0 || !S_ISDIR(st.st_mode) || stat(target, &st) < 0)
			continue;
		if (under(cwd, point) || under("/tmp", point)) {
			char name[32];
			snprintf(name, sizeof name, "m%d", i);
			char *m = overlay(point, name);
			if (m) {
				mnt(m, target, NULL, MS_BIND | MS_REC, NULL);
				continue;
			}
		}
		mnt(point, target, NULL, MS_BIND | MS_REC, NULL);
		mnt(NULL, target, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_REC, NULL);
		if (ndone < 64)
			snprintf(done[ndone++], sizeof done[0], "%s", point);
	}
	fclose(f);
}

static void write_file(const char *path, const char *text) {
	int fd = open(path, O_WRONLY);
	if (fd < 0 || write_all(fd, text, strlen(text)) < 0)
		die(path);
	close(fd);
}

/* build is steps 3 to 8 of docs/implementing.md, in PID 1 of the new
 * namespaces. */
static void build(const char *journal) {
	char cwd[4096], target[8192], map[64];
	uid_t uid = geteuid();
	gid_t gid = getegid();
	if (!getcwd(cwd, sizeof cwd))
		die("getcwd");
	mnt(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL);
	mnt("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0700");
	char *m = overlay("/", "root");
	if (!m)
		die("overlay of /");
	char root[1024];
	snprintf(root, sizeof root, "%s", m);
	submounts(root, cwd);
	snprintf(target, sizeof target, "%s/dev", root);
	mnt("/dev", target, NULL, MS_BIND | MS_REC, NULL);
	snprintf(target, sizeof target, "%s/dev/shm", root);
	mnt("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777");
	snprintf(target, sizeof target, "%s/sys", root);
	mnt("/sys", target, NULL, MS_BIND | MS_REC, NULL);
	mnt(NULL, target, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY, NULL);
	snprintf(target, sizeof target, "%s/proc", root);
	mnt("proc", target, "proc", MS_NOSUID | MS_NODEV, NULL);
	for (int i = 0; i < nmask; i++) {
		snprintf(target, sizeof target, "%s%.1023s", root, mask[i]);
		mkdirs(target);
		mnt("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755");
	}
	snprintf(target, sizeof target, "%s%s", root, journal);
	mkdirs(target);
	mnt(journal, target, NULL, MS_BIND | MS_REC, NULL);
	if (chdir(root) < 0 || syscall(SYS_pivot_root, ".", ".") < 0 || umount2(".", MNT_DETACH) < 0)
		die("pivot_root");
	if (chdir(cwd) < 0 && chdir("/") < 0)
		die("chdir");
	int s = socket(AF_INET, SOCK_DGRAM, 0);
	struct ifreq ifr;
	memset(&ifr, 0, sizeof ifr);
	strcpy(ifr.ifr_name, "lo");
	if (s < 0 || ioctl(s, SIOCGIFFLAGS, &ifr) < 0)
		die("lo");
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0)
		die("lo up");
	close(s);
	sethostname("polyloop-machine", 16);
	if (unshare(CLONE_NEWUSER) < 0)
		die("user namespace");
	write_file("/proc/self/setgroups", "deny");
	snprintf(map, sizeof map, "0 %u 1", (unsigned)uid);
	write_file("/proc/self/uid_map", map);
	snprintf(map, sizeof map, "0 %u 1", (unsigned)gid);
	write_file("/proc/self/gid_map", map);
	syscall(SYS_keyctl, 1 /* KEYCTL_JOIN_SESSION_KEYRING */, NULL);
}

/* child is the forked child: the pipes, the machine if asked, the kernel. */
static void child(const char *msg, int say) {
	char paths[3][4096], journal[4096];
	const char *keys[3] = {"stdin", "stdout", "stderr"};
	int modes[3] = {O_RDONLY, O_WRONLY, O_WRONLY};
	signal(SIGCHLD, SIG_DFL);
	setsid();
	for (int fd = 0; fd < 3; fd++) {
		if (!string_field(msg, keys[fd], paths[fd], sizeof paths[fd]))
			die("fork without its pipes");
		int o = open(paths[fd], modes[fd]);
		if (o < 0 || dup2(o, fd) < 0)
			die(paths[fd]);
		close(o);
	}
	const char *m = strstr(msg, "\"machine\":");
	if (m && string_field(m, "journal_dir", journal, sizeof journal)) {
		read_mask(m);
		int flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS;
		const char *skip = getenv("FORKSERVER_SKIP");
		if (skip && strcmp(skip, "network") == 0)
			flags &= ~(CLONE_NEWNET | CLONE_NEWUTS);
		if (unshare(flags) < 0)
			die("unshare");
		pid_t inner = fork();
		if (inner < 0)
			die("fork");
		if (inner > 0) {
			char n[32];
			int len = snprintf(n, sizeof n, "%d", (int)inner);
			write_all(say, n, (size_t)len);
			close(say);
			int null = open("/dev/null", O_RDWR);
			dup2(null, 0);
			dup2(null, 1);
			dup2(null, 2);
			waitpid(inner, NULL, 0);
			_exit(0);
		}
		close(say);
		setsid();
		build(journal);
	} else {
		char n[32];
		int len = snprintf(n, sizeof n, "%d", (int)getpid());
		write_all(say, n, (size_t)len);
		close(say);
	}
	execvp(kernel[0], kernel);
	die(kernel[0]);
}

/* serve_fork forks for one fork message and answers forked. */
static void serve_fork(const char *msg) {
	int p[2];
	if (pipe(p) < 0)
		die("pipe");
	pid_t pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		close(p[0]);
		child(msg, p[1]);
	}
	close(p[1]);
	char n[32] = {0};
	size_t got = 0;
	for (ssize_t r; got < sizeof n - 1 && (r = read(p[0], n + got, sizeof n - 1 - got)) != 0;) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			break;
		got += (size_t)r;
	}
	close(p[0]);
	char out[96];
	int len = snprintf(out, sizeof out, "{\"type\":\"forked\",\"pid\":%d}\n", got ? atoi(n) : (int)pid);
	write_all(1, out, (size_t)len);
}

/* relay copies the runner's input (after pending bytes) to the kernel and
 * the kernel's output to the runner until either ends. */
static int relay(struct reader *in, int to, struct reader *from, pid_t k) {
	if (write_all(to, in->buf, in->n) < 0 || write_all(1, from->buf, from->n) < 0)
		return 1;
	struct pollfd fds[2] = {{.fd = 0, .events = POLLIN}, {.fd = from->fd, .events = POLLIN}};
	char buf[65536];
	for (;;) {
		if (poll(fds, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return 1;
		}
		if (fds[0].revents) {
			ssize_t r = read(0, buf, sizeof buf);
			if (r <= 0) {
				close(to);
				fds[0].fd = -1;
			} else if (write_all(to, buf, (size_t)r) < 0) {
				break;
			}
		}
		if (fds[1].revents) {
			ssize_t r = read(from->fd, buf, sizeof buf);
			if (r <= 0 || write_all(1, buf, (size_t)r) < 0)
				break;
		}
	}
	int status = 0;
	waitpid(k, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static struct reader in, from;

int main(int argc, char **argv) {
	if (argc < 2) {
		fprintf(stderr, "usage: forkserver KERNEL [ARGS...]\n");
		return 2;
	}
	kernel = argv + 1;
	in.fd = 0;
	char *hello = next_line(&in);
	if (!hello)
		return 0;
	int to[2], back[2];
	if (pipe(to) < 0 || pipe(back) < 0)
		die("pipe");
	pid_t k = fork();
	if (k == 0) {
		dup2(to[0], 0);
		dup2(back[1], 1);
		close(to[0]);
		close(to[1]);
		close(back[0]);
		close(back[1]);
		execvp(kernel[0], kernel);
		die(kernel[0]);
	}
	close(to[0]);
	close(back[1]);
	from.fd = back[0];
	write_all(to[1], hello, strlen(hello));
	char *answer = next_line(&from);
	const char *caps = answer ? strstr(answer, "\"capabilities\":[") : NULL;
	if (!caps)
		die("the kernel's hello");
	size_t at = (size_t)(caps - answer) + strlen("\"capabilities\":[");
	write_all(1, answer, at);
	write_all(1, "\"fork-server\",", strlen("\"fork-server\","));
	write_all(1, answer + at, strlen(answer + at));
	char *msg = next_line(&in);
	if (!msg || !strstr(msg, "\"type\":\"fork\"")) {
		/* --no-fork: this process is the kernel; relay. */
		if (msg)
			write_all(to[1], msg, strlen(msg));
		return relay(&in, to[1], &from, k);
	}
	kill(k, SIGKILL);
	waitpid(k, NULL, 0);
	close(to[1]);
	close(back[0]);
	signal(SIGCHLD, SIG_IGN); /* children are reaped by the kernel */
	while (msg) {
		if (strstr(msg, "\"type\":\"fork\""))
			serve_fork(msg);
		else if (!strstr(msg, "\"type\":\"hello\""))
			break;
		free(msg);
		msg = next_line(&in);
	}
	return 0;
}
