package main

import (
	"runtime"
	"testing"
	"unsafe"

	"github.com/pregao/pregao/engine"
)

// TestExCashAllocScale1: what the total return keeps per Dataset at the
// scale-1 demo (engine.Dataset.ExCash: one entry per ticker and
// prior_ex_date with cash, and one offset per asset), logged and bounded
// at 4 MiB. make test runs it in its pass without -race.
func TestExCashAllocScale1(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("builds the scale-1 demo (make test runs it in its pass without -race)")
	}
	ds, err := demoDataset()
	if err != nil {
		t.Fatal(err)
	}
	entries, tickers := 0, 0
	assets := ds.Assets()
	for i := range assets {
		if n := len(ds.ExCash(&assets[i])); n > 0 {
			entries += n
			tickers++
		}
	}
	bytes := entries*int(unsafe.Sizeof(engine.ExCash{})) + (len(assets)+1)*4
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	t.Logf("scale 1: %d ex-cash entries of %d tickers (%d assets, %d cash action versions): %d bytes, %.2f %% of the live heap (%d MiB)",
		entries, tickers, len(assets), len(ds.CashActions()), bytes, 100*float64(bytes)/float64(ms.HeapAlloc), ms.HeapAlloc>>20)
	if entries == 0 || bytes > 4<<20 {
		t.Errorf("%d entries, %d bytes", entries, bytes)
	}
}
