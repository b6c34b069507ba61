package journal

import (
	"bytes"
	"errors"
	"testing"
)

func FuzzParse(f *testing.F) {
	a, _ := Encode(Record{Type: TypeRunStarted})
	b, _ := Encode(Record{Type: TypeModelOutput, Step: 1, Output: "x\ny"})
	c, _ := Encode(Record{Type: TypeActionIntent, Step: 1, Tool: "t", Arguments: map[string]any{"k": []any{1.5, "v"}}})
	f.Add(append(append(append([]byte(nil), a...), b...), c...))
	f.Add(append(append([]byte(nil), a...), b[:10]...))
	f.Add([]byte("00000000 {}\n"))
	f.Add([]byte("zzzzzzzz {\"type\":\"x\"}\n"))
	f.Add([]byte("\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse("j", data)
		if c.ValidBytes > int64(len(data)) {
			t.Fatalf("ValidBytes %d beyond %d", c.ValidBytes, len(data))
		}
		var te *TailError
		if err != nil && !errors.As(err, &te) {
			t.Fatalf("error without a location: %v", err)
		}
		// The records before any damage are exactly what the valid prefix holds.
		again, err2 := Parse("j", data[:c.ValidBytes])
		if err2 != nil || len(again.Records) != len(c.Records) {
			t.Fatalf("valid prefix re-read: %d records, err %v (first read %d)", len(again.Records), err2, len(c.Records))
		}
		for _, r := range c.Records {
			line, err := Encode(r)
			if err != nil || !bytes.HasSuffix(line, []byte("\n")) {
				t.Fatalf("record does not re-encode: %+v %v", r, err)
			}
		}
	})
}
