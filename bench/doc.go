// Package bench holds black-box benchmarks and a small load runner for the
// Pregão HTTP API. Requests go through the real router and middleware
// (authentication, metrics, pooled buffers) over a demo snapshot built in
// process (demo.Generate, ratios.Derive, engine.Build). Nothing imports
// bench; it imports what it measures.
package bench
