package polyloopkit

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/polyloop/polyloop-conform/trajectories"
)

// runner is the test's side of a Serve: it writes the runner's lines and
// reads the kernel's.
type runner struct {
	t   *testing.T
	in  *io.PipeWriter
	out *bufio.Scanner
}

func startServe(t *testing.T, k Kernel) *runner {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	go func() { Serve(context.Background(), k, inR, outW); outW.Close() }()
	t.Cleanup(func() { inW.Close() })
	return &runner{t: t, in: inW, out: bufio.NewScanner(outR)}
}

func (r *runner) send(line string) {
	r.t.Helper()
	if _, err := io.WriteString(r.in, line+"\n"); err != nil {
		r.t.Fatal(err)
	}
}

// next reads the kernel's next message, failing after a second.
func (r *runner) next() map[string]any {
	r.t.Helper()
	got := make(chan map[string]any, 1)
	go func() {
		var m map[string]any
		if r.out.Scan() {
			json.Unmarshal(r.out.Bytes(), &m)
		}
		got <- m
	}()
	select {
	case m := <-got:
		if m == nil {
			r.t.Fatal("the kit's output ended")
		}
		return m
	case <-time.After(time.Second):
		r.t.Fatal("no message from the kit within a second")
	}
	return nil
}

const spec = `{"scenario":"run.0000000000000001","tools":[{"name":"grep","has_handler":true}],"definition":{},"requests":[{"name":"a","budget":{"max_effective_steps":3,"max_total_steps":3},"visible_tools":null},{"name":"b","budget":{"max_effective_steps":3,"max_total_steps":3},"visible_tools":null}],"phased":true}`

// A kernel that calls the model, reports a journal point and calls a
// handler: calls are numbered from 1, the point names its phase in a
// phased scenario, and the runner's cancel releases the pending call and
// ends the run's context the way it says (a cancellation, or the deadline
// passing), while the run still returns its trajectory.
func TestServe_callsJournalPointsAndCancel(t *testing.T) {
	for _, c := range []struct {
		cancel string
		want   error
	}{{`{"type":"cancel","call":3}`, context.Canceled}, {`{"type":"cancel","call":3,"deadline":true}`, context.DeadlineExceeded}} {
		stopped := make(chan error, 1)
		k := Kernel{Name: "probe", Capabilities: []string{"json-actions"}, Run: func(ctx context.Context, spec Spec, seams *Seams) (*trajectories.Trajectory, error) {
			if _, err := seams.Model(ctx, 1, []ChatMessage{{Role: "user", Content: "go"}}); err != nil {
				return nil, err
			}
			if err := seams.JournalPoint(1, Point{When: "before", Seq: 1, Record: "run_started"}); err != nil {
				return nil, err
			}
			_, err := seams.Handler(ctx, 1, "grep", map[string]any{})
			stopped <- ctx.Err()
			if !errors.Is(err, ctx.Err()) {
				return nil, errors.New("the released call did not return the run's context error")
			}
			return &trajectories.Trajectory{Format: trajectories.Format, Scenario: spec.Scenario}, nil
		}}
		r := startServe(t, k)
		r.send(`{"type":"hello","suite":"polyloop-conform","suite_version":"0.3.0","protocol":1}`)
		if h := r.next(); h["type"] != "hello" || h["name"] != "probe" || len(h["capabilities"].([]any)) != 1 {
			t.Fatalf("hello: %v", h)
		}
		r.send(`{"type":"run","id":"run.0000000000000001","journal_dir":"/nonexistent","report_journal_points":true,"spec":` + spec + `}`)
		if m := r.next(); m["type"] != "model_call" || m["call"] != 1.0 || m["phase"] != 1.0 {
			t.Fatalf("first call: %v", m)
		}
		r.send(`{"type":"model_result","call":1,"output":"{}"}`)
		if m := r.next(); m["type"] != "journal_point" || m["call"] != 2.0 || m["phase"] != 1.0 {
			t.Fatalf("journal point: %v", m)
		}
		r.send(`{"type":"continue","call":2}`)
		if m := r.next(); m["type"] != "handler_call" || m["call"] != 3.0 || m["tool"] != "grep" {
			t.Fatalf("handler call: %v", m)
		}
		r.send(c.cancel)
		if m := r.next(); m["type"] != "released" || m["call"] != 3.0 {
			t.Fatalf("after cancel: %v", m)
		}
		if err := <-stopped; !errors.Is(err, c.want) {
			t.Errorf("%s: the run's context ended with %v, want %v", c.cancel, err, c.want)
		}
		if m := r.next(); m["type"] != "result" || m["id"] != "run.0000000000000001" {
			t.Fatalf("result: %v", m)
		}
	}
}
