// Package httpapi serves the Pregão market-data API over HTTP.
//
// It holds the routes (julienschmidt/httprouter), authentication by API key
// and plan, query and body parsing with strict validation, append-style JSON
// encoders for the hot paths, the error model and the Prometheus metrics of
// the server. Handlers are thin: they parse, call the engine's query
// functions on one immutable engine.Dataset, encode, and return an error.
//
// httpapi imports only engine from this module (not engine/ratios, which
// runs at build time: indicators are looked up in the Dataset's own
// catalog); it must not import snapshot, cmd or bench, and nothing imports
// httpapi but cmd/pregao and bench.
package httpapi
