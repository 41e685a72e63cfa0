//go:build race

package httpapi

// raceEnabled: the race detector makes sync.Pool drop a share of what is
// put back, so allocation counts are only meaningful without it; and it
// makes the tests that send thousands of requests one after another 7 to
// 10 times slower: make test runs those in its pass without it.
const raceEnabled = true
