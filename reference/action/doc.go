// Package action holds what a model decided to do in one step and the
// tolerant parser for PolyLoop's JSON action protocol.
//
// Implements 0003.D5 (the two action languages), 0003.D6 (tolerant JSON
// parsing: fences, conservative collapse of flattened arguments, repairs
// listed by name) and 0003.D7 (unparseable output is a decision failure).
package action
