//go:build race

package httpapi

// raceEnabled: the race detector makes sync.Pool drop a share of what is
// put back, so allocation counts are only meaningful without it.
const raceEnabled = true
