//go:build race

package cli

// raceOn says the test binary is race-instrumented (go test -race).
const raceOn = true
