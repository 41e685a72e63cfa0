//go:build !race

package assemble

// raceEnabled: see race_on_test.go.
const raceEnabled = false
