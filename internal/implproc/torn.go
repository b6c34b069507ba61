package implproc

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/polyloop/polyloop-conform/fakes"
	"github.com/polyloop/polyloop-conform/internal/journalfile"
	"github.com/polyloop/polyloop-conform/internal/protocol"
	"github.com/polyloop/polyloop-conform/scenarios"
)

// tornRecord runs sc uninterrupted on another process, over fakes of its
// own, and returns record seq of its journal (of the phase the crash
// names): the record a process of the same scenario writes there. The
// runner tears that record, never one whose after point the killed
// process reported (journal-lines, 0002.D5).
func (c *Client) tornRecord(ctx context.Context, sc *scenarios.Scenario, seq int) ([]byte, error) {
	plain := *sc
	plain.ID = sc.ID + ".torn-record"
	plain.Faults.Crash, plain.Faults.TornTail, plain.Faults.JournalDamage = nil, false, ""
	root, err := os.MkdirTemp(c.Volume(), "polyloop-conform-journal-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(root)
	dir := filepath.Join(root, "run")
	if _, err := c.RunWith(ctx, &plain, fakes.New(&plain, nil), protocol.RunOptions{Points: true, JournalDir: dir}); err != nil {
		return nil, fmt.Errorf("the run that shows the record to tear: %w", err)
	}
	if sc.Request == nil {
		dir = protocol.PhaseJournal(dir, sc.FaultPhase())
	}
	path, err := journalfile.Find(dir)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if err := journalfile.Check(data); err != nil {
		return nil, err
	}
	whole, _ := journalfile.Lines(data)
	if seq < 1 || seq > len(whole) {
		return nil, fmt.Errorf("the uninterrupted run journalled %d record(s), none at seq %d to tear", len(whole), seq)
	}
	return whole[seq-1], nil
}
