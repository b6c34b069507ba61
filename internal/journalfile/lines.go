package journalfile

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"os"
	"strconv"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Check holds every whole line of a journal-lines journal to its framing,
// "checksum-hex SP json LF" (0002.D1.records): eight hex digits, a space,
// and a body whose CRC-32C they are. CRC-32 (IEEE, Python's zlib.crc32) is
// accepted as well: the protocol option fixes one record per line with its
// own checksum, the record names CRC-32C, and an implementation that chose
// the other polynomial still tells a torn line from a whole one. A last
// line without its newline is a torn write and is not checked. The error
// names the line (1-based) and what is wrong with it.
func Check(data []byte) error {
	line := 0
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			return nil // the torn tail
		}
		line++
		if err := checkLine(data[:i]); err != nil {
			return fmt.Errorf("journal line %d: %w", line, err)
		}
		data = data[i+1:]
	}
	return nil
}

func checkLine(l []byte) error {
	if len(l) < 10 || l[8] != ' ' {
		return fmt.Errorf("not \"checksum-hex SP json\" (%.40q): journal-lines means each line carries its own checksum (0002.D1.records)", l)
	}
	want, err := strconv.ParseUint(string(l[:8]), 16, 32)
	if err != nil {
		return fmt.Errorf("checksum %q is not eight hex digits (0002.D1.records)", l[:8])
	}
	body := l[9:]
	if uint32(want) != crc32.Checksum(body, castagnoli) && uint32(want) != crc32.ChecksumIEEE(body) {
		return fmt.Errorf("checksum %s does not match its body (neither CRC-32C nor CRC-32): a whole line whose checksum fails is damage, not a write the journal made (0002.D1.records)", l[:8])
	}
	return nil
}

// Lines returns the whole lines of a journal, newline included, and
// what follows the last newline (a torn write, or nothing).
func Lines(data []byte) (whole [][]byte, torn []byte) {
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			return whole, data
		}
		whole = append(whole, data[:i+1])
		data = data[i+1:]
	}
}

// AppendTorn appends the first half of record (a whole line of the same
// run's journal, newline included) to the journal at path: what a crash
// during that write leaves when the process is killed at the point before
// it (0002.D5). Unlike Tear, the record cut was never complete in the
// journal the killed process wrote: no process saw it whole.
func AppendTorn(path string, record []byte) error {
	body := bytes.TrimSuffix(record, []byte("\n"))
	if len(body) < 2 {
		return fmt.Errorf("append a torn record: %q is too short to tear", record)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return fmt.Errorf("append a torn record: %w", err)
	}
	_, err = f.Write(body[:len(body)/2])
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("append a torn record: %w", err)
	}
	return nil
}
