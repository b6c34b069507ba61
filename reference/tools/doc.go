// Package tools is the reference kernel's tool layer: ToolSpec, ToolRegistry
// and the registry-derived RegistryExecutor, exactly as design 0008 decides.
//
// Decision IDs implemented here: 0008.D1 (the handler lives on the spec,
// appended last), 0008.D2 (handler optional, Executor checks every spec),
// 0008.D3 (a handler takes the arguments only and returns text),
// 0008.D4 and its rows 0008.D4.no-tool-call, 0008.D4.validate,
// 0008.D4.env-error, 0008.D4.handler-error, 0008.D4.normal-return,
// 0008.D4.cancelled, 0008.D4.constants, plus 0006.D6 (registry methods).
package tools
