//go:build race

package main

// raceEnabled: tests too heavy under the race detector run in make test's
// pass without it.
const raceEnabled = true
