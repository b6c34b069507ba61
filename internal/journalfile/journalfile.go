// Package journalfile cuts and damages a step journal kept as one file of
// one record per line, the framing of 0002.D1.records: what a crash during
// a write leaves (a torn last line) and what no crash leaves (a changed
// byte inside a whole line). The reference driver applies them to its own
// journal; the runner applies them to the journal of an implementation
// that offers journal-lines, so that the damage resume must notice is the
// runner's, not staged by the implementation it judges.
package journalfile

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Find returns the one regular file under dir (at any depth): the journal
// of an implementation that offers journal-lines. None or several is an
// error that says what was found.
func Find(dir string) (string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			files = append(files, path)
		}
		return nil
	})
	switch {
	case err != nil:
		return "", fmt.Errorf("read the journal directory: %w", err)
	case len(files) == 0:
		return "", fmt.Errorf("journal_dir %s holds no file; an implementation that offers journal-lines keeps its journal there, as one file", dir)
	case len(files) > 1:
		return "", fmt.Errorf("journal_dir %s holds %d files (%s, %s…); an implementation that offers journal-lines keeps one journal file per run", dir, len(files), files[0], files[1])
	}
	return files[0], nil
}

// Records counts the complete records (lines ending in a newline) of the
// journal at path, and whether a torn record (no newline) follows them.
func Records(path string) (complete int, torn bool, err error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, false, err
	}
	complete = bytes.Count(data, []byte("\n"))
	return complete, len(data) > 0 && data[len(data)-1] != '\n', nil
}

// Tear cuts the last record in half, which is what a crash during that
// write leaves (docs/protocol.md, tear_tail). Resume must report the torn
// tail, drop it and go on as if that write never happened (0002.D5).
func Tear(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("tear journal tail: %w", err)
	}
	body := bytes.TrimSuffix(data, []byte("\n"))
	if len(body) == 0 {
		return fmt.Errorf("tear journal tail: %s has no record to tear", path)
	}
	start := bytes.LastIndexByte(body, '\n') + 1
	cut := start + (len(body)-start)/2
	if err := os.Truncate(path, int64(cut)); err != nil {
		return fmt.Errorf("tear journal tail: %w", err)
	}
	return nil
}

// Damage kinds (docs/protocol.md, damage).
const (
	LastChecksum = "last_checksum" // a byte changed inside the last record, its line kept whole
	Middle       = "middle"        // a byte changed inside the first record, the records after it intact
)

// ErrKind is an unknown damage kind.
var ErrKind = errors.New("unknown journal damage (last_checksum or middle)")

// Damage changes one byte inside a whole record, the way no crash does:
// the record's own checksum no longer matches, so resume must refuse the
// journal (0002.D5). The byte is the record's middle past a checksum
// prefix of nine bytes ("crc32c-hex "), 9 + (length-10)/2.
func Damage(path, kind string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("damage journal: %w", err)
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	if n := len(lines); n > 0 && len(lines[n-1]) == 0 {
		lines = lines[:n-1]
	}
	var i int
	switch kind {
	case LastChecksum:
		i = len(lines) - 1
	case Middle:
		if len(lines) < 2 {
			return fmt.Errorf("damage journal: %s has %d record(s); damage in the middle needs two", path, len(lines))
		}
		i = 0
	default:
		return fmt.Errorf("damage journal: %w: %q", ErrKind, kind)
	}
	if i < 0 || len(lines[i]) < 12 {
		return fmt.Errorf("damage journal: %s has no record to damage", path)
	}
	at := 9 + (len(lines[i])-10)/2
	if lines[i][at] == 'x' {
		lines[i][at] = 'y'
	} else {
		lines[i][at] = 'x'
	}
	return os.WriteFile(path, bytes.Join(lines, nil), 0o644)
}
