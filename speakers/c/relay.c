/*
 * relay.c is a protocol speaker as a native binary: it starts a kernel
 * (normally `polyloop-conform serve-reference`) as its own child and relays
 * the protocol's JSON lines both ways, so that what the runner exercises is
 * a native process's start, its stdout, its signals and its files
 * (speakers/README.md). POSIX and C99 only; build: cc -O2 -o relay relay.c
 *
 * The child is the command on the relay's own command line, run as given,
 * or, with no arguments, $POLYLOOP_SPEAKER_CHILD run through /bin/sh -c.
 *
 * Process rules it keeps (docs/protocol.md, "Transport"):
 *   - stdout carries the child's lines and nothing else; diagnostics go to
 *     stderr, which the child shares.
 *   - SIGTERM and SIGINT are forwarded to the child, and the relay exits
 *     when the child does, with its exit status (128 + N for signal N).
 *   - when the relay's stdin ends, the child's stdin is closed, which ends
 *     the child; when the relay is killed, the child's stdin ends the same
 *     way (the relay held its only write end), and on Linux the child is
 *     also sent SIGKILL by the kernel (PR_SET_PDEATHSIG).
 *   - as PID 1 of a PID namespace it reaps every process that ends.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

static volatile sig_atomic_t child_pid;

/* forward sends the signal the relay got to the child (kill is
 * async-signal-safe). Having a handler also matters as PID 1 of a PID
 * namespace, where a signal without one is dropped. */
static void forward(int sig) {
	if (child_pid > 0) {
		kill((pid_t)child_pid, sig);
	}
}

/* write_all writes n bytes of buf to fd, whole; 0 on success. */
static int write_all(int fd, const char *buf, size_t n) {
	while (n > 0) {
		ssize_t w = write(fd, buf, n);
		if (w < 0) {
			if (errno == EINTR) {
				continue;
			}
			return -1;
		}
		buf += w;
		n -= (size_t)w;
	}
	return 0;
}

/* start forks and execs argv with its stdin and stdout on pipes; *to_child
 * and *from_child are the relay's ends. */
static pid_t start(char **argv, int *to_child, int *from_child) {
	int in[2], out[2];
	if (pipe(in) < 0 || pipe(out) < 0) {
		return -1;
	}
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		return -1;
	}
	if (pid == 0) {
#ifdef __linux__
		/* Die with the relay even if something else holds the stdin pipe. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent) {
			_exit(1);
		}
#else
		(void)parent;
#endif
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[0]);
		close(in[1]);
		close(out[0]);
		close(out[1]);
		signal(SIGPIPE, SIG_DFL);
		execvp(argv[0], argv);
		fprintf(stderr, "relay: exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	*to_child = in[1];
	*from_child = out[0];
	return pid;
}

/* relay copies the relay's stdin to the child and the child's stdout to
 * ours, each chunk written as soon as it is read, until the child's stdout
 * ends. */
static void relay(int to_child, int from_child) {
	char buf[1 << 16];
	struct pollfd fds[2] = {{0, POLLIN, 0}, {from_child, POLLIN, 0}};
	for (;;) {
		if (poll(fds, 2, -1) < 0) {
			if (errno == EINTR) {
				continue;
			}
			perror("relay: poll");
			return;
		}
		if (fds[0].revents) {
			ssize_t n = read(0, buf, sizeof buf);
			if (n < 0 && errno == EINTR) {
				continue;
			}
			if (n <= 0 || write_all(to_child, buf, (size_t)n) < 0) {
				/* Our stdin ended (or the child stopped reading):
				 * the child's stdin ends too. */
				close(to_child);
				fds[0].fd = -1;
			}
		}
		if (fds[1].revents) {
			ssize_t n = read(from_child, buf, sizeof buf);
			if (n < 0 && errno == EINTR) {
				continue;
			}
			if (n <= 0) {
				return;
			}
			if (write_all(1, buf, (size_t)n) < 0) {
				/* The runner closed our stdout: the child has no
				 * reader either. */
				kill((pid_t)child_pid, SIGTERM);
				return;
			}
		}
	}
}

/* wait_child reaps until the child has ended (reaping any other process
 * too, as PID 1 must) and returns its exit status as a shell reports it. */
static int wait_child(pid_t pid) {
	for (;;) {
		int status;
		pid_t got = waitpid(-1, &status, 0);
		if (got < 0) {
			if (errno == EINTR) {
				continue;
			}
			return 1;
		}
		if (got != pid) {
			continue;
		}
		if (WIFEXITED(status)) {
			return WEXITSTATUS(status);
		}
		return 128 + WTERMSIG(status);
	}
}

int main(int argc, char **argv) {
	char *sh[] = {"/bin/sh", "-c", getenv("POLYLOOP_SPEAKER_CHILD"), NULL};
	char **command = argv + 1;
	if (argc < 2) {
		if (sh[2] == NULL || sh[2][0] == '\0') {
			fputs("relay: no child to start: give its command line as arguments, or set POLYLOOP_SPEAKER_CHILD\n", stderr);
			return 2;
		}
		command = sh;
	}
	/* A write to a closed pipe is an error to handle, not a death. */
	signal(SIGPIPE, SIG_IGN);
	int to_child, from_child;
	pid_t pid = start(command, &to_child, &from_child);
	if (pid < 0) {
		perror("relay: start the child");
		return 2;
	}
	child_pid = pid;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = forward;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	relay(to_child, from_child);
	close(from_child);
	return wait_child(pid);
}
