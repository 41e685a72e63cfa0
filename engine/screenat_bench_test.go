package engine_test

import (
	"testing"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/demo"
)

// BenchmarkScreenerAt builds the screener's rows and prices at an instant
// five years before the demo's last session (scale 1; 5 of its rows
// renamed since, named as they traded then): the work of one as_of
// screener request before its encoding.
func BenchmarkScreenerAt(b *testing.B) {
	ds := derivedDataset(b, demo.Generate(1, 1))
	s := ds.Screener()
	at := engine.SessionClose(ds.LastSession()).AddDate(-5, 0, -3)
	s.At(at, nil) // the first call gathers the inputs
	b.ReportAllocs()
	for b.Loop() {
		s.At(at, nil)
	}
}
