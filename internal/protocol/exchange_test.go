package protocol_test

import (
	"bufio"
	"context"
	"io"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/polyloop/polyloop-conform/fakes"
	"github.com/polyloop/polyloop-conform/internal/engine"
	"github.com/polyloop/polyloop-conform/internal/protocol"
	"github.com/polyloop/polyloop-conform/internal/refdriver"
	"github.com/polyloop/polyloop-conform/internal/serveref"
	"github.com/polyloop/polyloop-conform/scenarios"
	"github.com/polyloop/polyloop-conform/trajectories"
)

// These tests run the exchange against the reference server over
// in-process pipes: no process, no command line, only the wire.

// caps are serve-reference's default claims.
var caps = append(refdriver.Capabilities(), protocol.WireSink, protocol.WireMeasure, protocol.JournalLines)

// pipePeer is serveref.Serve behind a protocol.Conn; Kill ends its input,
// as a killed process's pipes end.
type pipePeer struct {
	*protocol.Conn
	in     io.WriteCloser
	served chan struct{} // closed when Serve returned
	once   sync.Once
	log    *lineLog
}

func (p *pipePeer) Kill() {
	p.once.Do(func() {
		p.in.Close()
		p.Drain()
	})
}

// lineLog keeps every line both ways, "> " for the runner's.
type lineLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *lineLog) add(from string, line []byte) {
	mark := "< "
	if from == "runner" {
		mark = "> "
	}
	l.mu.Lock()
	l.lines = append(l.lines, mark+strings.TrimSpace(string(line)))
	l.mu.Unlock()
}

func (l *lineLog) has(prefix, part string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range l.lines {
		if strings.HasPrefix(s, prefix) && strings.Contains(s, part) {
			return true
		}
	}
	return false
}

// servePeer starts the reference on in-process pipes and shakes hands.
// tamper, if set, rewrites each line the reference writes before the
// runner reads it.
func servePeer(t *testing.T, log *lineLog, tamper func([]byte) []byte) *pipePeer {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	p := &pipePeer{in: inW, served: make(chan struct{}), log: log}
	p.Conn = protocol.NewConn(inW, func() string { return "served in process" })
	go func() {
		defer close(p.served)
		id := serveref.Identity{Name: "ref", Version: "1", SpecVersion: "s", Capabilities: caps}
		serveref.Serve(context.Background(), id, serveref.ServeOptions{}, inR, outW)
		outW.Close()
	}()
	if tamper == nil {
		go p.Receive(outR)
	} else {
		tr, tw := io.Pipe()
		go func() {
			sc := bufio.NewScanner(outR)
			sc.Buffer(nil, protocol.MaxLineBytes)
			for sc.Scan() {
				tw.Write(append(tamper(sc.Bytes()), '\n'))
			}
			tw.Close()
		}()
		go p.Receive(tr)
	}
	t.Cleanup(func() {
		p.Kill()
		select {
		case <-p.served:
		case <-time.After(10 * time.Second):
			t.Error("the reference did not return after its input ended")
		}
	})
	p.Tap(log.add)
	if err := p.Send(&protocol.Message{Type: protocol.TypeHello, Protocol: protocol.Version}); err != nil {
		t.Fatal(err)
	}
	m, err := p.Next(context.Background(), "its hello")
	if err != nil || m.Type != protocol.TypeHello || m.Name != "ref" {
		t.Fatalf("handshake: %v, %+v", err, m)
	}
	return p
}

// pipeDriver is the engine's Driver over in-process pipes: one Exchange
// per scenario, a fresh reference for the run and one for its resume.
type pipeDriver struct {
	t      *testing.T
	log    *lineLog
	tamper func([]byte) []byte
	killed bool // the last run was killed at its crash point
}

func (d *pipeDriver) Name() string           { return "reference over pipes" }
func (d *pipeDriver) Capabilities() []string { return caps }

func (d *pipeDriver) Run(ctx context.Context, sc *scenarios.Scenario, env *fakes.Env) (*trajectories.Trajectory, error) {
	wait, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	x, err := protocol.NewExchange(ctx, wait, sc, env, caps, protocol.RunOptions{})
	if err != nil {
		return nil, err
	}
	defer x.Close()
	p := servePeer(d.t, d.log, d.tamper)
	out, err := x.Run(p)
	if err != nil {
		return nil, err
	}
	d.killed = x.Killed()
	if resume, err := x.Resumes(out); err != nil || !resume {
		return out, err
	}
	if out, err = x.Resume(servePeer(d.t, d.log, d.tamper)); err != nil {
		return nil, err
	}
	return x.Resumed(out)
}

// rewrite is a tamper replacing the first match of pattern in each line.
func rewrite(pattern, to string) func([]byte) []byte {
	re := regexp.MustCompile(pattern)
	return func(l []byte) []byte {
		done := false
		return re.ReplaceAllFunc(l, func(m []byte) []byte {
			if done {
				return m
			}
			done = true
			return re.ReplaceAll(m, []byte(to))
		})
	}
}

func scenario(t *testing.T, id string) *scenarios.Scenario {
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

// run judges one scenario through the exchange, with its golden.
func run(t *testing.T, d *pipeDriver, id string) engine.Result {
	t.Helper()
	g, err := trajectories.Goldens()
	if err != nil {
		t.Fatal(err)
	}
	s := &engine.Suite{Goldens: g}
	return s.Run(context.Background(), d, scenario(t, id))
}

// TestExchangeAnswersModelCalls: a scenario's model and handler calls
// are answered from its fakes, and the run passes.
func TestExchangeAnswersModelCalls(t *testing.T) {
	d := &pipeDriver{t: t, log: &lineLog{}}
	res := run(t, d, "cancel.during-model-call")
	if !res.Passed() {
		t.Fatalf("not passed: %v", res.Messages())
	}
	for _, want := range []struct{ prefix, part string }{
		{"< ", `"type":"model_call"`}, {"> ", `"type":"model_result"`},
		{"< ", `"type":"handler_call"`}, {"> ", `"type":"handler_result"`},
	} {
		if !d.log.has(want.prefix, want.part) {
			t.Errorf("no %s%s on the wire", want.prefix, want.part)
		}
	}
}

// TestExchangeCancelsABlockedCall: the model call that blocks is
// cancelled on the wire, and the implementation's released is taken.
func TestExchangeCancelsABlockedCall(t *testing.T) {
	d := &pipeDriver{t: t, log: &lineLog{}}
	res := run(t, d, "cancel.during-model-call")
	if !res.Passed() {
		t.Fatalf("not passed: %v", res.Messages())
	}
	var call string
	for _, l := range d.log.lines {
		if m := regexp.MustCompile(`^> \{"type":"cancel","call":(\d+)`).FindStringSubmatch(l); m != nil {
			call = m[1]
		}
	}
	if call == "" || !d.log.has("< ", `"type":"released","call":`+call+"}") || !d.log.has("< ", `"type":"model_call","call":`+call+",") {
		t.Errorf("no model_call cancelled and released on the wire:\n%s", strings.Join(d.log.lines, "\n"))
	}
}

// TestExchangeKillsAtTheCrashPointAndResumes: the first reference is
// killed at the scenario's crash point, a second one resumes.
func TestExchangeKillsAtTheCrashPointAndResumes(t *testing.T) {
	d := &pipeDriver{t: t, log: &lineLog{}}
	res := run(t, d, "resume.code-action-not-replayed")
	if !res.Passed() {
		t.Fatalf("not passed: %v", res.Messages())
	}
	if !d.killed {
		t.Error("the first process was not killed at the crash point")
	}
	if !d.log.has("> ", `"type":"resume"`) {
		t.Error("no resume message")
	}
}

// TestExchangeRejectsAMalformedMessage: a model_call whose phase is
// negative fails the run with the JSON pointer of the bad field.
func TestExchangeRejectsAMalformedMessage(t *testing.T) {
	d := &pipeDriver{t: t, log: &lineLog{}, tamper: rewrite(`("type":"model_call","call":\d+,"phase":)0`, "${1}-1")}
	res := run(t, d, "cancel.during-model-call")
	if res.Passed() {
		t.Fatal("a model_call with phase -1 passed")
	}
	if msg := strings.Join(res.Messages(), "\n"); !strings.Contains(msg, "at /phase") || !strings.Contains(msg, "docs/protocol.schema.json") {
		t.Errorf("the error does not point at /phase: %s", msg)
	}
}

// TestExchangeCrossChecksTheWire: what the implementation says is held to
// what crossed the wire: a phase the spec does not have, and a result for
// another run, each fail the run and say why.
func TestExchangeCrossChecksTheWire(t *testing.T) {
	for _, c := range []struct {
		name, from, to, want string
	}{
		{"phase", `("type":"model_call","call":\d+,"phase":)0`, "${1}3", "names phase 3, but the spec has 1 request(s)"},
		{"run id", `("type":"result","id":"run\.)`, "${1}0", "result message for run"},
		{"released", `("type":"released","call":)\d+`, "${1}999", "released names call 999, which the runner did not cancel"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := &pipeDriver{t: t, log: &lineLog{}, tamper: rewrite(c.from, c.to)}
			res := run(t, d, "cancel.during-model-call")
			if msg := strings.Join(res.Messages(), "\n"); res.Passed() || !strings.Contains(msg, c.want) {
				t.Errorf("want a failure saying %q, got passed=%v: %s", c.want, res.Passed(), msg)
			}
		})
	}
}
