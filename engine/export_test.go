package engine

// CheckShareActionOrder is checkShareActionOrder, for the tests on the
// demo (package engine_test).
var CheckShareActionOrder = checkShareActionOrder
