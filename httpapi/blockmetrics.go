package httpapi

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/pregao/pregao/engine"
)

// registerBlockMetrics registers the gauges of the verification of the
// served snapshot's blocks (engine.Blocks; all 0 for a snapshot verified
// whole at open).
func registerBlockMetrics(reg prometheus.Registerer, store *engine.Store) {
	status := func() engine.BlockStatus {
		if ds := store.Current(); ds != nil {
			if bl := ds.Blocks(); bl != nil {
				return bl.Status()
			}
		}
		return engine.BlockStatus{}
	}
	for _, g := range []struct {
		name, help string
		v          func(engine.BlockStatus) int64
	}{
		{"pregao_snapshot_blocks", "Blocks of the served snapshot's columns verified on first use (format 6 loaded lazily; 0: none, the snapshot was verified whole at open).",
			func(s engine.BlockStatus) int64 { return s.Blocks }},
		{"pregao_snapshot_blocks_verified", "Blocks of the served snapshot verified so far, by a request's first use or the background pass.",
			func(s engine.BlockStatus) int64 { return s.Verified }},
		{"pregao_snapshot_blocks_bad", "Blocks of the served snapshot whose bytes do not match their checksum: any is a damaged file, and the snapshot answers 503.",
			func(s engine.BlockStatus) int64 { return s.Bad }},
	} {
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: g.name, Help: g.help},
			func() float64 { return float64(g.v(status())) }))
	}
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "pregao_snapshot_failed",
		Help: "1 while the served snapshot answers 503 to every API request: a block found bad, a read of its mapped file that faulted (the file cut in place), or deferred kinds that could not be loaded; 0 otherwise."},
		func() float64 {
			if ds := store.Current(); ds != nil && (ds.BlockErr() != nil || ds.DeferredErr() != nil) {
				return 1
			}
			return 0
		}))
}
