//go:build race

package engine_test

// raceEnabled: the race detector makes the demo tests 10 to 17 times
// slower; they walk a smaller demo with it (demoUniverse) and the
// scale-1 demo in make test's pass without it.
const raceEnabled = true
