package protocol

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/polyloop/polyloop-conform/internal/jsontext"
)

func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"type":"hello","protocol":1,"capabilities":["json-actions"]}`,
		`{"type":"model_call","call":1,"phase":0,"input":[{"role":"user","content":"x"}]}`,
		`{"type":"handler_result","call":2,"error":{"type":"ValueError","message":"m"}}`,
		`{"type":"result","id":"a.b","trajectory":{"format":"polyloop.trajectory/v1","steps":[]}}`,
		`{"type":"journal_point","call":3,"point":{"when":"before","seq":1,"record":"run_started"}}`,
		`not json`, `{}`, `{"type":1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		m, err := Decode(line)
		// The typed checks agree with the schema on whatever they accept
		// or refuse (TestTypedDecodeAgreesWithTheSchema has the corpus).
		var head struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(line, &head) == nil && json.Valid(line) && jsontext.CheckDuplicateKeys(line) == nil {
			if _, typed := shapes[head.Type]; typed {
				if _, serr := decodeBySchema(bytes.TrimSpace(line)); (err == nil) != (serr == nil) {
					t.Fatalf("verdicts differ on %q: typed %v, schema %v", line, err, serr)
				}
			}
		}
		if err != nil {
			return
		}
		if m.Type == "" {
			t.Fatal("decoded a message without a type")
		}
		out, err := Encode(m)
		if err != nil {
			t.Fatalf("decoded message does not encode: %v", err)
		}
		back, err := Decode(out)
		if err != nil || back.Type != m.Type || back.Call != m.Call {
			t.Fatalf("round trip: %+v %v", back, err)
		}
	})
}
