// Package jsontext is the suite's one way of writing JSON: no HTML
// escaping (model output, prompts and observations hold <, > and & that
// must stay byte-identical), object keys in encoding/json's sorted order,
// numbers as decoded (json.Number keeps what the model wrote).
package jsontext

import (
	"bytes"
	"encoding/json"
	"io"
)

// NewEncoder returns an encoder that writes to w without HTML escaping,
// indented by indent when it is not empty.
func NewEncoder(w io.Writer, indent string) *json.Encoder {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if indent != "" {
		enc.SetIndent("", indent)
	}
	return enc
}

// Marshal renders v on one line, without the encoder's trailing newline.
func Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	if err := NewEncoder(&buf, "").Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
