// Package docs embeds the machine-readable documents the runner reads at
// run time, so the binary works from any directory.
package docs

import (
	"embed"
	"io/fs"
)

//go:embed protocol.schema.json
var protocolSchema []byte

// ProtocolSchema returns the JSON Schema of the stdio protocol's messages
// (docs/protocol.schema.json).
func ProtocolSchema() []byte { return protocolSchema }

//go:embed versions/*.json
var versions embed.FS

// Versions returns the suite's version manifests, versions/<version>.json
// (docs/versioning.md): what each released suite held, hashed, so a run
// can say what changed since a version a team names.
func Versions() fs.FS {
	sub, err := fs.Sub(versions, "versions")
	if err != nil {
		panic(err) // the directory is embedded above
	}
	return sub
}
