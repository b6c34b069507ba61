// Package assembly builds the message list a model is sent at each step, in
// the order design 0010 fixes.
//
// Implements 0010.D1 (no tool section is rendered; no system message is
// synthesised), 0010.D2 (segment order, lowest change frequency first),
// 0010.D3 (one USER message per injected entry, verbatim, channels in name
// order, empty injection equals none), 0010.D4 (the observation template
// must hold its placeholder) and 0010.D5 (size is measured block by block and
// an unknown block type fails).
package assembly
