//go:build !race

package httpapi

// raceEnabled: see race_on_test.go.
const raceEnabled = false
