// Package httpapi serves the Pregão market-data API over HTTP.
//
// It holds the routes (julienschmidt/httprouter), authentication by API key
// and plan, query and body parsing with strict validation, append-style JSON
// encoders for the hot paths, the error model and the Prometheus metrics of
// the server. Handlers are thin: they parse, call the engine's query
// functions on one immutable engine.Dataset, encode, and return an error.
//
// Every operation is declared once, as data, in the route table
// (routes.go, exported by Routes): method, path, summary, path and query
// parameters (type, default, range, allowed values), body and response
// schema. The router is built from it, and handlers read their parameters
// and bodies through those declarations, so the table is the single source
// an OpenAPI document can be generated from.
//
// httpapi imports only engine, internal/atomicfile (the keys file's
// lock and atomic replacement) and internal/yieldpoint (admission counts
// the computing requests) from this module (not engine/ratios, which
// runs at build time: indicators are looked up in the Dataset's own
// catalog); it must not import anything of the snapshot tree, cmd or
// bench, and nothing imports httpapi but cmd/pregao and bench.
package httpapi
