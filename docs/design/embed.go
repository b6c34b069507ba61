// Package design embeds the decision records so that the polyloop-conform
// binary can check coverage from any directory.
package design

import "embed"

// FS holds the decision records (*.md) and the upstream lock, if any.
//
//go:embed *.md
var FS embed.FS
