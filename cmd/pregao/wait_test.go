package main

import (
	"testing"
	"time"
)

// waitBound is how long a test waits for a state before it gives up and
// fails: a guard against a hang, far above what any state takes on a
// loaded machine (two `make test` side by side on two cores). It is
// never the wait itself: tests poll, or block on, the state they need.
const waitBound = 2 * time.Minute

// waitUntil polls cond every few milliseconds until it holds, and fails
// tb, naming what it waited for, when it still does not after waitBound.
func waitUntil(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	end := time.Now().Add(waitBound)
	for !cond() {
		if time.Now().After(end) {
			tb.Fatalf("%s: not within %v", what, waitBound)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
