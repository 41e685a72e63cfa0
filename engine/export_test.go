package engine

import "testing"

// CheckShareActionOrder is checkShareActionOrder, for the tests on the
// demo (package engine_test).
var CheckShareActionOrder = checkShareActionOrder

// SameBuild is sameBuild, for the tests on the demo.
func SameBuild(t *testing.T, x, y *Dataset) {
	t.Helper()
	sameBuild(t, x, y)
}
