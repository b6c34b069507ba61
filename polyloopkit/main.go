package polyloopkit

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
)

// workerEnv marks a process the fork server started as a worker: it
// waits for the three paths of a fork on its stdin before it is anything.
const workerEnv = "POLYLOOPKIT_FORK_WORKER"

// Main speaks the protocol on stdin and stdout for k until stdin ends,
// then exits the process: call it from the kernel's main.
//
// Go has no fork(2) for a running program (the runtime's threads do not
// survive it), so the fork server Main offers (docs/implementing.md, "The
// fork server without fork(2)") is a pool: on the first fork message it
// starts a worker, a new process of this same executable with the same
// arguments that has done its package initialisation and waits on a
// private pipe for the fork's three paths; it hands that worker over
// (forked names its pid), and keeps one worker started ahead from then
// on. A worker leads a process group of its own, holds /dev/null as its
// stdout until it has the runner's pipes, and exits when the server dies
// (its pipe ends). A Go program starts in milliseconds, so the pool saves
// the runner's shell and namespace set-up more than the start itself;
// Kernel.NoForkServer turns it off.
func Main(k Kernel) {
	in, out := io.Reader(os.Stdin), io.Writer(os.Stdout)
	s := &session{k: k}
	if os.Getenv(workerEnv) != "" {
		os.Unsetenv(workerEnv)
		var err error
		if in, out, err = becomeWorker(os.Stdin); err != nil {
			fmt.Fprintln(os.Stderr, "polyloopkit: fork worker:", err)
			os.Exit(1)
		}
	} else if !k.NoForkServer && poolable {
		// A worker ahead exits when this process does, by any death: the
		// only write end of its private pipe closes with it.
		s.fork = (&pool{}).hand
	}
	w := bufio.NewWriter(out)
	s.out = flushing{w}
	if err := serve(context.Background(), s, in); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// flushing writes each line through at once: the runner waits for it.
type flushing struct{ w *bufio.Writer }

func (f flushing) Write(p []byte) (int, error) {
	n, err := f.w.Write(p)
	if err == nil {
		err = f.w.Flush()
	}
	return n, err
}

// becomeWorker waits on the private pipe for the paths of a fork, or its
// end (the server died: exit without running anything), then takes the
// runner's named pipes as stdin, stdout and stderr.
func becomeWorker(private io.Reader) (io.Reader, io.Writer, error) {
	line, err := bufio.NewReader(private).ReadBytes('\n')
	if err != nil {
		os.Exit(0) // the server is gone before handing this worker over
	}
	var f Fork
	if err := json.Unmarshal(line, &f); err != nil {
		return nil, nil, err
	}
	stdin, err := os.OpenFile(f.Stdin, os.O_RDONLY, 0)
	if err != nil {
		return nil, nil, err
	}
	stdout, err := os.OpenFile(f.Stdout, os.O_WRONLY, 0)
	if err != nil {
		return nil, nil, err
	}
	stderr, err := os.OpenFile(f.Stderr, os.O_WRONLY, 0)
	if err != nil {
		return nil, nil, err
	}
	if err := redirectStderr(stderr); err != nil {
		return nil, nil, err
	}
	os.Stdin, os.Stdout = stdin, stdout
	return stdin, stdout, nil
}

// pool is the fork server's workers: one started ahead once the first
// fork came.
type pool struct {
	mu    sync.Mutex
	ahead *worker
}

type worker struct {
	cmd  *exec.Cmd
	pipe io.WriteCloser
}

// hand gives the worker started ahead (or a new one) the fork's paths,
// starts the next, and returns the pid handed over.
func (p *pool) hand(m *incoming) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	w := p.ahead
	p.ahead = nil
	if w == nil {
		var err error
		if w, err = startWorker(); err != nil {
			return 0, err
		}
	}
	paths, _ := json.Marshal(Fork{Type: "fork", Stdin: m.Stdin, Stdout: m.Stdout, Stderr: m.Stderr})
	_, err := w.pipe.Write(append(paths, '\n'))
	w.pipe.Close()
	if err != nil {
		return 0, fmt.Errorf("hand the paths to worker %d: %w", w.cmd.Process.Pid, err)
	}
	if next, err := startWorker(); err == nil {
		p.ahead = next
	}
	return w.cmd.Process.Pid, nil
}

// startWorker starts this executable again as a worker, in a process
// group of its own, its stdout the null device, reaped when it exits.
func startWorker() (*worker, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, os.Args[1:]...)
	cmd.Env = append(os.Environ(), workerEnv+"=1")
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = ownSession()
	pipe, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go cmd.Wait()
	return &worker{cmd: cmd, pipe: pipe}, nil
}
