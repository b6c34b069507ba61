package implproc

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/polyloop/polyloop-conform/internal/engine"
	"github.com/polyloop/polyloop-conform/internal/protocol"
	"github.com/polyloop/polyloop-conform/internal/refdriver"
	"github.com/polyloop/polyloop-conform/internal/serveref"
	"github.com/polyloop/polyloop-conform/scenarios"
	"github.com/polyloop/polyloop-conform/trajectories"
)

// These tests give the Client children served in process by the
// reference over pipes (io.Pipe, or the fork server's named pipes): the
// handshake, the pool, transcripts, stderr and the fork server, without
// starting a process.

var refCaps = append(refdriver.Capabilities(), protocol.WireSink, protocol.WireMeasure, protocol.JournalLines)

// serve runs the reference on in and out until in ends, then closes out.
func serve(caps []string, in io.Reader, out io.WriteCloser) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		id := serveref.Identity{Name: "ref-in-process", Version: "1", SpecVersion: "s", Capabilities: caps}
		serveref.Serve(context.Background(), id, serveref.ServeOptions{}, in, out)
		out.Close()
	}()
	return done
}

// pipeChild is a child served in process over io.Pipe.
func pipeChild(c *Client, caps []string) (*child, <-chan struct{}) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := serve(caps, inR, outW)
	return newChild(nil, 0, inW, outR, &stderrWriter{c: c}), done
}

func loadScenario(t *testing.T, id string) *scenarios.Scenario {
	t.Helper()
	all, err := scenarios.LoadEmbedded()
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range all {
		if sc.ID == id {
			return sc
		}
	}
	t.Fatalf("no scenario %s", id)
	return nil
}

func judge(t *testing.T, c *Client, id string) engine.Result {
	t.Helper()
	g, err := trajectories.Goldens()
	if err != nil {
		t.Fatal(err)
	}
	return (&engine.Suite{Goldens: g}).Run(context.Background(), c, loadScenario(t, id))
}

// TestHandshakeOverPipes: the runner's hello is answered, the
// implementation's name and claims are taken from it, and the two lines
// open every transcript the process serves.
func TestHandshakeOverPipes(t *testing.T) {
	c := &Client{Trace: true}
	ch, done := pipeChild(c, refCaps)
	if _, err := c.handshake(ch, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(c.Name(), "ref-in-process 1 (spec s") || len(c.Capabilities()) != len(refCaps) {
		t.Errorf("name %q, capabilities %v", c.Name(), c.Capabilities())
	}
	c.put(ch)
	res := judge(t, c, "cancel.during-model-call")
	if !res.Passed() {
		t.Fatalf("not passed: %v", res.Messages())
	}
	lines := strings.Split(c.Transcript("cancel.during-model-call"), "\n")
	if len(lines) < 4 || !strings.HasPrefix(lines[0], `> {"type":"hello"`) || !strings.HasPrefix(lines[1], `< {"type":"hello"`) ||
		!strings.HasPrefix(lines[2], `> {"type":"run"`) {
		t.Errorf("transcript does not open with the handshake, then the run:\n%s", strings.Join(lines[:min(4, len(lines))], "\n"))
	}
	c.Close()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Error("Close left the served process running")
	}
}

// TestHandshakeRefusesAnotherProtocol: an implementation that speaks
// another protocol version is refused, and its process ended.
func TestHandshakeRefusesAnotherProtocol(t *testing.T) {
	c := &Client{}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	go func() {
		io.ReadAll(io.LimitReader(inR, 1)) // the runner's hello has begun
		outW.Write([]byte(`{"type":"hello","protocol":2,"name":"x"}` + "\n"))
		io.Copy(io.Discard, inR)
		outW.Close()
	}()
	_, err := c.handshake(newChild(nil, 0, inW, outR, &stderrWriter{c: c}), nil)
	if err == nil || !strings.Contains(err.Error(), "speaks protocol 2, this runner speaks 1") {
		t.Errorf("got %v", err)
	}
}

// zygote is a fork server served in process: for each fork it opens the
// named pipes and serves the reference on them, reporting a pid that no
// process can have (so the kill's signal reaches nothing, and the end of
// the child's stdin ends it).
type zygote struct {
	mu     sync.Mutex
	forks  int
	served []<-chan struct{}
}

// noPid is above the kernel's largest pid_max (2^22).
const noPid = 1<<22 + 1

func (z *zygote) run(c *Client, t *testing.T) *child {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	conn := protocol.NewConn(outW, func() string { return "the runner" })
	go conn.Receive(inR)
	go func() {
		defer outW.Close()
		ctx := context.Background()
		for {
			m, err := conn.Next(ctx, "a message to the fork server")
			if err != nil {
				return
			}
			switch m.Type {
			case protocol.TypeHello:
				conn.Send(&protocol.Message{Type: protocol.TypeHello, Protocol: protocol.Version, Name: "zygote", Version: "1",
					Capabilities: append(refCaps[:len(refCaps):len(refCaps)], protocol.ForkServer)})
			case protocol.TypeFork:
				z.fork(t, m)
				conn.Send(&protocol.Message{Type: protocol.TypeForked, Pid: noPid})
			}
		}
	}()
	return newChild(nil, 0, inW, outR, &stderrWriter{c: c})
}

func (z *zygote) fork(t *testing.T, m *protocol.Message) {
	z.mu.Lock()
	defer z.mu.Unlock()
	z.forks++
	done := make(chan struct{})
	z.served = append(z.served, done)
	go func() {
		defer close(done)
		in, err := os.OpenFile(m.Stdin, os.O_RDONLY, 0)
		if err != nil {
			t.Error(err)
			return
		}
		out, _ := os.OpenFile(m.Stdout, os.O_WRONLY, 0)
		errs, _ := os.OpenFile(m.Stderr, os.O_WRONLY, 0)
		errs.Write([]byte("forked child starting\n"))
		<-serve(refCaps, in, out)
		errs.Close()
		in.Close()
	}()
}

// TestForkServerChildKilled: with a fork server, each process is forked;
// a crash scenario's first child is killed at the crash point (its stdin
// ends and it stops) and a second child resumes the run.
func TestForkServerChildKilled(t *testing.T) {
	var logs strings.Builder
	c := &Client{Logs: &logs}
	z := &zygote{}
	zch := z.run(c, t)
	if _, err := c.handshake(zch, nil); err != nil {
		t.Fatal(err)
	}
	c.zygote = zch
	// The resume server: a resume is never forked by the server that
	// forked the process it follows (shared memory survives a child).
	rz := &zygote{}
	rch := rz.run(c, t)
	if _, err := c.handshake(rch, nil); err != nil {
		t.Fatal(err)
	}
	c.resumer, c.resumerTried = rch, true
	res := judge(t, c, "resume.code-action-not-replayed")
	if !res.Passed() {
		t.Fatalf("not passed: %v", res.Messages())
	}
	z.mu.Lock()
	rz.mu.Lock()
	forks, resumes := z.forks, rz.forks
	served := append(append([]<-chan struct{}(nil), z.served...), rz.served...)
	rz.mu.Unlock()
	z.mu.Unlock()
	if forks != 1 || resumes != 1 {
		t.Fatalf("%d forks from the first server and %d from the resume server, want 1 and 1: the run and its resume", forks, resumes)
	}
	select {
	case <-served[0]:
	case <-time.After(10 * time.Second):
		t.Error("the first forked child still runs after its kill")
	}
	c.Close()
	c.logMu.Lock()
	got := logs.String()
	c.logMu.Unlock()
	if strings.Count(got, "forked child starting") != 2 {
		t.Errorf("the forked children's stderr did not reach the log twice: %q", got)
	}
	for _, d := range served[1:] {
		select {
		case <-d:
		case <-time.After(10 * time.Second):
			t.Error("Close left a forked child running")
		}
	}
}

// TestForkServerGone: a fork server that stops answering is reported
// once, as the runner's problem.
func TestForkServerGone(t *testing.T) {
	c := &Client{}
	z := &zygote{}
	zch := z.run(c, t)
	if _, err := c.handshake(zch, nil); err != nil {
		t.Fatal(err)
	}
	c.zygote = zch
	zch.stdin.Close() // the server reads end of file and stops
	ch, err := c.askFork(context.Background(), &c.zygote, [3]string{"a", "b", "c"}, nil)
	if ch != nil || !errors.Is(err, errServerGone) {
		t.Errorf("got %v, %v; want errServerGone", ch, err)
	}
}

// TestCrashOnResumeThirdProcess: with faults.crash_on_resume the process
// that resumes is killed too and a third resumes: two processes from the
// resume server, the first resume asking for journal points and the
// second not, and the scenario passes.
func TestCrashOnResumeThirdProcess(t *testing.T) {
	c := &Client{Trace: true}
	z := &zygote{}
	zch := z.run(c, t)
	if _, err := c.handshake(zch, nil); err != nil {
		t.Fatal(err)
	}
	c.zygote = zch
	rz := &zygote{}
	rch := rz.run(c, t)
	if _, err := c.handshake(rch, nil); err != nil {
		t.Fatal(err)
	}
	c.resumer, c.resumerTried = rch, true
	const id = "resume.crash-again-after-resume"
	res := judge(t, c, id)
	if !res.Passed() {
		t.Fatalf("not passed: %v", res.Messages())
	}
	z.mu.Lock()
	rz.mu.Lock()
	forks, resumes := z.forks, rz.forks
	rz.mu.Unlock()
	z.mu.Unlock()
	if forks != 1 || resumes != 2 {
		t.Errorf("%d forks from the first server and %d from the resume server, want 1 and 2: the run and two resumes", forks, resumes)
	}
	var sent []string
	for _, l := range strings.Split(c.Transcript(id), "\n") {
		if strings.HasPrefix(l, `> {"type":"resume"`) {
			sent = append(sent, l)
		}
	}
	if len(sent) != 2 || !strings.Contains(sent[0], `"report_journal_points":true`) || strings.Contains(sent[1], `"report_journal_points"`) {
		t.Errorf("resume messages sent, want two, only the first asking for journal points:\n%s", strings.Join(sent, "\n"))
	}
	c.Close()
}
