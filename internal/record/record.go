// Package record is the manifest `run --record DIR` leaves beside the
// trajectories it writes, so that `verify DIR` can tell a file of that
// recording from one an earlier run left behind.
package record

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/polyloop/polyloop-conform/internal/atomicfile"
	"github.com/polyloop/polyloop-conform/internal/jsontext"
)

// FileName is the manifest's name in a recording directory. It is not a
// .json file, so that nothing reading DIR/*.json takes it for a
// trajectory.
const FileName = "polyloop-record.manifest"

// Format is the manifest's format version.
const Format = "polyloop.record/v1"

// Manifest says which trajectories one recording run wrote.
type Manifest struct {
	Format         string    `json:"format"`
	SuiteVersion   string    `json:"suite_version"`
	Implementation string    `json:"implementation"`
	RecordedAt     time.Time `json:"recorded_at"`
	// Selection is the run's --run patterns ("" for the whole suite).
	Selection string `json:"selection,omitempty"`
	// Scenarios are the IDs whose trajectories this run wrote, sorted.
	Scenarios []string `json:"scenarios"`
}

// Write stores m in dir, atomically.
func Write(dir string, m Manifest) error {
	m.Format = Format
	slices.Sort(m.Scenarios)
	if m.Scenarios == nil {
		m.Scenarios = []string{}
	}
	var buf bytes.Buffer
	if err := jsontext.NewEncoder(&buf, "  ").Encode(m); err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(dir, FileName), buf.Bytes())
}

// Read returns dir's manifest; ok is false when dir has none (trajectories
// recorded by hand, or by an older runner).
func Read(dir string) (m Manifest, ok bool, err error) {
	path := filepath.Join(dir, FileName)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Manifest{}, false, nil
	}
	if err != nil {
		return Manifest{}, false, err
	}
	if err := jsontext.CheckDuplicateKeys(data); err != nil {
		return Manifest{}, false, fmt.Errorf("%s: %w", path, err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return Manifest{}, false, fmt.Errorf("%s: %w; delete it, or record again with run --record", path, err)
	}
	if m.Format != Format {
		return Manifest{}, false, fmt.Errorf("%s: format %q, want %q; record again with run --record", path, m.Format, Format)
	}
	return m, true, nil
}

// Has reports whether the recording wrote the scenario's trajectory.
func (m Manifest) Has(id string) bool {
	_, found := slices.BinarySearch(m.Scenarios, id)
	return found
}
