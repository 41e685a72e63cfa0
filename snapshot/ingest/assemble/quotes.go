package assemble

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"sort"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/cotahist"
)

func (a *assembler) readQuotes(ctx context.Context, prog Progress) error {
	files, err := expand(a.cfg.Cotahist, isCotahist)
	if err != nil {
		return fmt.Errorf("--cotahist: %w", err)
	}
	opt := cotahist.Options{Lenient: a.cfg.Lenient, Boards: a.cfg.Boards, OddLot: a.cfg.OddLot}
	if prog != nil {
		var ms runtime.MemStats
		opt.Progress = func(p cotahist.Progress) {
			runtime.ReadMemStats(&ms)
			rate := float64(p.Lines) / max(p.Elapsed.Seconds(), 1e-3)
			prog(fmt.Sprintf("COTAHIST %s: %d lines (%.0f lines/s), %.1f MB read, %d bars, heap %.0f MiB",
				filepath.Base(p.File), p.Lines, rate, float64(p.Bytes)/1e6, p.Kept, float64(ms.HeapInuse)/(1<<20)))
		}
	}
	im := cotahist.NewImporter(opt)
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := im.ImportFile(f); err != nil {
			return err
		}
	}
	a.quotes = im.Result()
	a.rep.Quotes = a.quotes.Stats
	return nil
}

// liquidityRanks ranks tickers by BRL volume over the last 21 sessions of
// the data (1 = most traded); tickers without trades then are absent (0).
func liquidityRanks(series []engine.Series) map[string]int {
	days := map[engine.Date]bool{}
	for _, s := range series {
		for _, d := range s.Dates {
			days[d] = true
		}
	}
	all := make([]engine.Date, 0, len(days))
	for d := range days {
		all = append(all, d)
	}
	slices.Sort(all)
	if len(all) == 0 {
		return nil
	}
	from := all[max(0, len(all)-21)]
	type tv struct {
		t string
		v float64
	}
	var vols []tv
	for _, s := range series {
		var v float64
		for j, d := range s.Dates {
			if d >= from && s.Volume[j].Valid() {
				v += float64(s.Volume[j])
			}
		}
		if v > 0 && engine.ValidTicker(s.Ticker) {
			vols = append(vols, tv{s.Ticker, v})
		}
	}
	sort.Slice(vols, func(i, j int) bool {
		if vols[i].v != vols[j].v {
			return vols[i].v > vols[j].v
		}
		return vols[i].t < vols[j].t
	})
	out := make(map[string]int, len(vols))
	for i, x := range vols {
		out[x.t] = i + 1
	}
	return out
}
