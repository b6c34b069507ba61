package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/polyloop/polyloop-conform/internal/jsontext"
)

// JSON writes the report as one JSON document (FormatVersion), with the
// counts, whether the run passed, and the grouped causes; rows are in
// scenario order, whatever order they ran in.
func JSON(w io.Writer, r *Report, _ Options) error {
	sorted := *r
	sorted.Rows = r.Sorted()
	r = &sorted
	out := struct {
		*Report
		Counts Counts  `json:"counts"`
		OK     bool    `json:"ok"`
		Causes []Cause `json:"causes,omitempty"`
	}{r, r.Counts(), r.OK(), Causes(r)}
	return jsontext.NewEncoder(w, "  ").Encode(out)
}

// ReadJSON reads a report JSON wrote, refusing other formats and versions.
// name is used in errors.
func ReadJSON(name string, data []byte) (*Report, error) {
	var head struct {
		Format string `json:"format"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("%s: not a JSON report: %w", name, err)
	}
	if head.Format != FormatVersion {
		return nil, fmt.Errorf("%s: format %q, want %q (write it with --format json)", name, head.Format, FormatVersion)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var r Report
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &r, nil
}
