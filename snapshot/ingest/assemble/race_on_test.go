//go:build race

package assemble

// raceEnabled: the race detector makes an import of the real registry 5
// times slower, and the import runs on one goroutine: the tests that
// import it many times run in make test's pass without it.
const raceEnabled = true
