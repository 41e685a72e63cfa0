// Package duckdbtest holds the proof that DuckDB reads the flat files of
// snapshot/flatfiles as the API answers: a module of its own, so that
// DuckDB's bindings (cgo and a static library of the engine, from the Go
// module proxy) stay out of the server's module and its go test ./...
// Run it with make files-test (.ci/run does).
package duckdbtest
