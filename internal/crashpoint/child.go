package crashpoint

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"

	"github.com/polyloop/polyloop-conform/fakes"
	"github.com/polyloop/polyloop-conform/internal/refdriver"
	"github.com/polyloop/polyloop-conform/reference/action"
	"github.com/polyloop/polyloop-conform/reference/assembly"
	"github.com/polyloop/polyloop-conform/reference/journal"
	"github.com/polyloop/polyloop-conform/reference/tools"
	"github.com/polyloop/polyloop-conform/scenarios"
	"github.com/polyloop/polyloop-conform/trajectories"
)

// Environment variables that put a test binary into child mode.
const (
	EnvScenario = "POLYLOOP_CRASH_SCENARIO"
	EnvDir      = "POLYLOOP_CRASH_DIR"
	EnvPoint    = "POLYLOOP_CRASH_POINT" // index of the point to die at; "resume" to resume
)

// Call is one line of the call log.
type Call struct {
	Kind  string `json:"kind"` // model, handler or execute
	Tool  string `json:"tool,omitempty"`
	Step  int    `json:"step,omitempty"`
	Phase int    `json:"phase,omitempty"`
}

// CallLog appends calls to a file, fsyncing each, so the record survives
// the SIGKILL that follows.
type CallLog struct {
	mu sync.Mutex
	f  *os.File
}

// OpenCallLog opens (or creates) the log at path for appending.
func OpenCallLog(path string) (*CallLog, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("call log: %w", err)
	}
	return &CallLog{f: f}, nil
}

// Add records one call durably.
func (l *CallLog) Add(c Call) {
	b, _ := json.Marshal(c)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.f.Write(append(b, '\n'))
	l.f.Sync()
}

// ReadCalls reads a call log.
func ReadCalls(path string) ([]Call, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []Call
	dec := json.NewDecoder(bytes.NewReader(data))
	for dec.More() {
		var c Call
		if err := dec.Decode(&c); err != nil {
			return nil, fmt.Errorf("call log %s: %w", path, err)
		}
		out = append(out, c)
	}
	return out, nil
}

// callTally counts a call log by kind.
type callTally struct {
	handlers   map[string]int // handler calls per tool
	modelSteps map[int]int    // model calls per step
	executors  map[int]int    // project executor calls per phase
}

func tally(calls []Call) callTally {
	t := callTally{handlers: map[string]int{}, modelSteps: map[int]int{}, executors: map[int]int{}}
	for _, c := range calls {
		switch c.Kind {
		case "handler":
			t.handlers[c.Tool]++
		case "model":
			t.modelSteps[c.Step]++
		case "execute":
			t.executors[c.Phase]++
		}
	}
	return t
}

// loggingEnv logs every model and handler call before answering it.
type loggingEnv struct {
	*fakes.Env
	log *CallLog
}

func (e loggingEnv) Complete(ctx context.Context, phase int, in []assembly.Message) (string, error) {
	e.log.Add(Call{Kind: "model", Step: fakes.StepOf(in)})
	return e.Env.Complete(ctx, phase, in)
}

func (e loggingEnv) CallHandler(ctx context.Context, phase int, tool string, args map[string]any) (string, error) {
	e.log.Add(Call{Kind: "handler", Tool: tool})
	return e.Env.CallHandler(ctx, phase, tool, args)
}

func (e loggingEnv) Execute(ctx context.Context, phase int, a action.Action) (tools.ActionOutcome, error) {
	e.log.Add(Call{Kind: "execute", Tool: a.Tool, Phase: phase})
	return e.Env.Execute(ctx, phase, a)
}

// Files inside a crash directory.
const (
	JournalDir = "journal"
	CallsFile  = "calls.jsonl"
	ResultFile = "result.json"
)

// ExitNotReached is the child's exit code when it finished without
// reaching its crash point.
const ExitNotReached = 3

// ChildMain runs child mode if the environment asks for it and reports
// whether it did; it exits the process itself.
func ChildMain() bool {
	id := os.Getenv(EnvScenario)
	if id == "" {
		return false
	}
	os.Exit(child(id, os.Getenv(EnvDir), os.Getenv(EnvPoint)))
	return true
}

func child(id, dir, point string) int {
	// Parse only this scenario: the child's start-up is the harness's cost.
	data, err := fs.ReadFile(scenarios.Embedded(), id+".yaml")
	if err != nil {
		fmt.Fprintf(os.Stderr, "crashpoint child: no scenario %q: %v\n", id, err)
		return 2
	}
	sc, err := scenarios.Parse(id+".yaml", data)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	env := loggingEnv{Env: fakes.New(sc, nil)}
	// The environment outlives the killed process: its scripted handlers
	// and executor go on from the calls already made.
	if prev, err := ReadCalls(filepath.Join(dir, CallsFile)); err == nil {
		t := tally(prev)
		env.Restore(t.handlers, t.executors)
	}
	log, err := OpenCallLog(filepath.Join(dir, CallsFile))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	env.log = log
	jdir := filepath.Join(dir, JournalDir)
	if point == "resume" {
		tr, err := refdriver.Process(context.Background(), sc, env, jdir, nil, true, refdriver.Options{})
		if err != nil {
			fmt.Fprintln(os.Stderr, "resume:", err)
			return 1
		}
		data, err := trajectories.Marshal(tr)
		if err == nil {
			err = trajectories.WriteFileAtomic(filepath.Join(dir, ResultFile), data)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return 0
	}
	k, err := strconv.Atoi(point)
	if err != nil {
		fmt.Fprintf(os.Stderr, "crashpoint child: bad point %q\n", point)
		return 2
	}
	inj := fakes.AtIndex(k)
	inj.Kill = func(journal.Point) {
		// A real kill: no deferred function, no buffered write, no exit
		// handler runs after this.
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	}
	if _, err := refdriver.Process(context.Background(), sc, env, jdir, inj.Hook, false, refdriver.Options{}); err != nil {
		fmt.Fprintln(os.Stderr, "first run:", err)
		return 1
	}
	return ExitNotReached
}
