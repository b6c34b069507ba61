// Package docs embeds the machine-readable documents the runner reads at
// run time, so the binary works from any directory.
package docs

import _ "embed"

//go:embed protocol.schema.json
var protocolSchema []byte

// ProtocolSchema returns the JSON Schema of the stdio protocol's messages
// (docs/protocol.schema.json).
func ProtocolSchema() []byte { return protocolSchema }
