package protocol

import "slices"

// ProtocolOptions are the capabilities no scenario needs: each lets the
// runner play a part of a fault, or (fork-server) start processes
// faster (docs/protocol.md, Handshake).
func ProtocolOptions() []string { return []string{WireSink, WireMeasure, JournalLines, ForkServer} }

// KnownCapability reports whether a hello may claim name.
func KnownCapability(name string) bool { return slices.Contains(capabilityNames, name) }

// CapabilityNames lists every capability and protocol option a hello may
// claim, in the order docs/protocol.md gives them.
func CapabilityNames() []string { return slices.Clone(capabilityNames) }
