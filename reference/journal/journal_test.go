package journal

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func writeRecords(t *testing.T, dir string, recs ...Record) *Writer {
	t.Helper()
	w, err := Create(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := w.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

func TestRoundTrip_0002_D1(t *testing.T) {
	dir := t.TempDir()
	w := writeRecords(t, dir,
		Record{Type: TypeRunStarted},
		Record{Type: TypeModelOutput, Step: 1, Output: "out"},
		Record{Type: TypeActionIntent, Step: 1, Tool: "t", Replay: "SAFE", Arguments: map[string]any{"a": "b"}},
	)
	w.Close()
	c, err := ReadFile(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Records) != 3 || c.Records[2].Tool != "t" || c.Records[1].Output != "out" {
		t.Fatalf("records = %+v", c.Records)
	}
	st, _ := os.Stat(filepath.Join(dir, FileName))
	if c.ValidBytes != st.Size() {
		t.Errorf("ValidBytes %d, file %d", c.ValidBytes, st.Size())
	}
	if _, err := Create(dir, Options{}); err == nil {
		t.Error("Create over an existing journal succeeded; it must refuse so a run never appends to another's journal")
	}
}

func TestTornTail_0002_D5(t *testing.T) {
	dir := t.TempDir()
	writeRecords(t, dir, Record{Type: TypeRunStarted}, Record{Type: TypeModelOutput, Step: 1, Output: "x"}).Close()
	good, _ := os.ReadFile(filepath.Join(dir, FileName))
	line, _ := Encode(Record{Type: TypeActionIntent, Step: 1, Tool: "t"})
	for cut := 1; cut < len(line); cut++ {
		data := append(append([]byte(nil), good...), line[:cut]...)
		c, err := Parse("j", data)
		var te *TailError
		if !errors.As(err, &te) || !te.Torn {
			t.Fatalf("cut %d: err = %v, want a torn TailError", cut, err)
		}
		if len(c.Records) != 2 || c.ValidBytes != int64(len(good)) {
			t.Fatalf("cut %d: kept %d records, valid %d", cut, len(c.Records), c.ValidBytes)
		}
	}
}

func TestCorruption_0002_D5(t *testing.T) {
	a, _ := Encode(Record{Type: TypeRunStarted})
	b, _ := Encode(Record{Type: TypeModelOutput, Step: 1, Output: "hello"})
	flipped := append([]byte(nil), b...)
	flipped[20] ^= 0x01
	t.Run("bad last line", func(t *testing.T) {
		c, err := Parse("j", append(append([]byte(nil), a...), flipped...))
		var te *TailError
		if !errors.As(err, &te) || te.Torn || errors.Is(err, ErrMidFileCorruption) || te.Line != 2 {
			t.Fatalf("err = %v", err)
		}
		if len(c.Records) != 1 {
			t.Errorf("records before the damage: %d", len(c.Records))
		}
	})
	t.Run("damage before intact lines", func(t *testing.T) {
		data := append(append(append([]byte(nil), a...), flipped...), a...)
		if _, err := Parse("j", data); !errors.Is(err, ErrMidFileCorruption) {
			t.Fatalf("err = %v, want ErrMidFileCorruption", err)
		}
	})
	t.Run("garbage", func(t *testing.T) {
		if _, err := Parse("j", []byte("not a journal\n")); err == nil {
			t.Fatal("garbage accepted")
		}
	})
}

func TestReopenCutsTornTail_0002_D5(t *testing.T) {
	dir := t.TempDir()
	writeRecords(t, dir, Record{Type: TypeRunStarted}).Close()
	f, _ := os.OpenFile(filepath.Join(dir, FileName), os.O_APPEND|os.O_WRONLY, 0)
	f.Write([]byte("0000"))
	f.Close()
	c, err := ReadFile(dir)
	if err == nil {
		t.Fatal("torn tail not reported")
	}
	w, err := Reopen(dir, c.ValidBytes, len(c.Records), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(Record{Type: TypeRunEnd}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	c, err = ReadFile(dir)
	if err != nil || len(c.Records) != 2 || c.Records[1].Type != TypeRunEnd {
		t.Fatalf("after reopen: %+v %v", c.Records, err)
	}
}

func TestWriteErrorsSurface_0002_D6(t *testing.T) {
	dir := t.TempDir()
	w, err := Create(dir, Options{WriteFault: func(p Point) error {
		if p.Record == TypeActionResult {
			return syscall.ENOSPC
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(Record{Type: TypeRunStarted}); err != nil {
		t.Fatal(err)
	}
	err = w.Append(Record{Type: TypeActionResult, Step: 1})
	var we *WriteError
	if !errors.As(err, &we) || !errors.Is(err, syscall.ENOSPC) || we.Seq != 2 {
		t.Fatalf("err = %v, want a WriteError wrapping ENOSPC for record 2", err)
	}
	w.Close()
	// A real failure: the file is closed under the writer.
	if err := w.Append(Record{Type: TypeRunEnd}); !errors.As(err, &we) {
		t.Errorf("write to a closed file: err = %v, want WriteError", err)
	}
	// A directory that cannot be created (a file is in the way).
	blocker := filepath.Join(t.TempDir(), "file")
	os.WriteFile(blocker, nil, 0o644)
	if _, err := Create(filepath.Join(blocker, "run"), Options{}); err == nil {
		t.Error("Create under a regular file succeeded")
	}
}

func TestHookPoints(t *testing.T) {
	var seen []string
	dir := t.TempDir()
	w, _ := Create(dir, Options{Hook: func(p Point) error { seen = append(seen, p.String()); return nil }})
	w.Append(Record{Type: TypeModelOutput, Step: 3})
	w.Close()
	want := []string{"before:1:model_output:step3", "after:1:model_output:step3"}
	if len(seen) != 2 || seen[0] != want[0] || seen[1] != want[1] {
		t.Errorf("points = %v, want %v", seen, want)
	}
	stop := errors.New("stop")
	w2, _ := Create(t.TempDir(), Options{Hook: func(p Point) error {
		if p.When == Before {
			return stop
		}
		return nil
	}})
	if err := w2.Append(Record{Type: TypeRunStarted}); !errors.Is(err, stop) {
		t.Errorf("hook error not returned unchanged: %v", err)
	}
	w2.Close()
}
