package run

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/polyloop/polyloop-conform/reference/events"
	"github.com/polyloop/polyloop-conform/reference/journal"
	"github.com/polyloop/polyloop-conform/reference/tools"
)

// Resume continues the run journalled in opts.JournalDir (0002.D3, D4):
// a recorded end is returned as it is; completed steps are never run or
// asked for again; a step whose output was recorded without an intent is
// settled from that output; an intent without a result is run again for a
// SAFE tool and ends the run with resume_outcome_unknown for a NEVER one.
func Resume(ctx context.Context, req *Request, opts Options) (*Result, error) {
	if opts.JournalDir == "" {
		return nil, errors.New("resume: Options.JournalDir is empty; pass the directory the interrupted run journalled to")
	}
	fsys := opts.JournalFS
	if fsys == nil {
		fsys = journal.OS
	}
	contents, err := journal.ReadFileFS(fsys, opts.JournalDir)
	info := &ResumeInfo{From: "start"}
	var tail *journal.TailError
	if err != nil {
		switch {
		case !errors.As(err, &tail):
			return nil, fmt.Errorf("resume: %w", err)
		case errors.Is(err, journal.ErrMidFileCorruption):
			return nil, fmt.Errorf("resume: %w: %w", journal.ErrDamaged, err)
		case !tail.Torn:
			// A complete last line that fails its checksum or does not
			// decode: no crash writes that (0002.D5).
			return nil, fmt.Errorf("resume: %w: %w", journal.ErrDamaged, err)
		}
		info.TornTail = tail.Error()
	}
	k := &kernel{req: req, opts: opts, stream: events.NewStream(opts.Sinks...)}
	var pendingOutput *journal.Record
	var pendingIntent *journal.Record
	for i := range contents.Records {
		r := contents.Records[i]
		switch r.Type {
		case journal.TypeModelOutput:
			pendingOutput, pendingIntent = &r, nil
		case journal.TypeActionIntent:
			pendingIntent = &r
		case journal.TypeActionResult:
			var st Step
			if err := decodeExact(r.Payload, &st); err != nil {
				return nil, fmt.Errorf("resume: step %d result record is unreadable: %w", r.Step, err)
			}
			if st.Outcome.Status != tools.StatusExecuted && opts.Departures.ResumeHistoryFromObservation {
				st.HistoryObservation = st.Outcome.Observation
			}
			k.steps = append(k.steps, st)
			k.count = st.Counters
			pendingOutput, pendingIntent = nil, nil
		case journal.TypeRunEnd:
			var end End
			if err := decodeExact(r.Payload, &end); err != nil {
				return nil, fmt.Errorf("resume: the run end record is unreadable: %w", err)
			}
			// The run is over: call nothing, write nothing.
			info.From = "run_end"
			return &Result{Steps: k.steps, End: end, Resume: info}, nil
		}
	}
	if len(k.steps) > 0 || pendingOutput != nil {
		info.From = "step"
	}
	w, err := journal.Reopen(opts.JournalDir, contents.ValidBytes, len(contents.Records), opts.journalOptions())
	if err != nil {
		return nil, err
	}
	defer w.Close()
	k.journal = w
	if len(contents.Records) == 0 {
		if err := k.write(journal.Record{Type: journal.TypeRunStarted}); err != nil {
			return nil, err
		}
	}
	k.stream.Emit(events.Event{Type: events.TypeRunResumed, Step: len(k.steps) + 1})
	end, err := k.continueResumed(ctx, pendingOutput, pendingIntent, info)
	if err != nil {
		res, err := k.stopped(err)
		if res != nil {
			res.Resume = info
		}
		return res, err
	}
	res, err := k.finish(end)
	if res != nil {
		res.Resume = info
	}
	return res, err
}

// continueResumed runs a resumed run to its end: the last settled step is
// judged again, a pending output is settled or replayed, then the loop
// goes on as usual.
func (k *kernel) continueResumed(ctx context.Context, out, intent *journal.Record, info *ResumeInfo) (End, error) {
	if out == nil && len(k.steps) > 0 {
		// The crash may have come between the last result and the end
		// record: judge that step again rather than ask for another.
		last := k.steps[len(k.steps)-1]
		if reason := k.req.judge(Verdict{Outcome: last.Outcome, ToolCompletedRun: last.ToolCompletedRun, Counters: k.count, Budget: k.req.budget}); reason != "" {
			return k.endWith(reason), nil
		}
	}
	if out != nil {
		end, done, err := k.resumePending(ctx, out, intent, info)
		if err != nil || done {
			return end, err
		}
	}
	return k.loop(ctx)
}

func (k *kernel) resumePending(ctx context.Context, out, intent *journal.Record, info *ResumeInfo) (End, bool, error) {
	input, size, err := k.buildInput()
	if err != nil {
		return End{}, false, fmt.Errorf("resume step %d: assemble context: %w", out.Step, err)
	}
	st := Step{Index: out.Step, ModelInput: input, ContextSize: size, ModelOutput: out.Output}
	if intent == nil {
		// The output was recorded but nothing was started: settle it now,
		// without asking the model again.
		return k.settle(ctx, st, settleFresh)
	}
	safe := tools.ReplayPolicy(intent.Replay) == tools.ReplaySafe
	if !safe {
		// 0002.D4: whether a NEVER action ran is unknown; a person decides.
		end := k.endWith(ResumeOutcomeUnknown)
		end.Detail = &EndDetail{Step: out.Step, Tool: intent.Tool}
		return end, true, nil
	}
	info.ReplayedStep = out.Step
	return k.settle(ctx, st, settleReplay)
}

// decodeExact reads a record's payload with its numbers as written: a
// settled step's arguments read back as float64 would come back rounded
// past 2^53 (0006.D6.exact-numbers). Found by generate.
func decodeExact(payload []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber()
	return dec.Decode(v)
}
