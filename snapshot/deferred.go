package snapshot

import (
	"fmt"

	"github.com/klauspost/compress/zstd"

	"github.com/pregao/pregao/engine"
)

// deferredKind reports whether the sections of kind name hold one of the
// engine's deferred kinds (engine.BuildOptions.Deferred): what a load
// with LoadOptions.Deferred decodes after the Dataset is usable.
func deferredKind(name string) bool {
	switch name {
	case "cash_actions", "fund_reports", "insider_reports", "documents":
		return true
	}
	return false
}

// deferredParts is what a load keeps of its deferred kinds between
// decodeSections and their decoding: the compressed bytes of their
// sections, verified by phase 1 (held, so that the bytes decoded are the
// bytes verified whatever happens to the file meanwhile), and what
// decodePart needs.
type deferredParts struct {
	on   bool     // the deferred kinds were left out (else decoded with the rest)
	comp [][]byte // per section: its compressed bytes when deferred

	h      Header
	secs   []Section
	starts []int // per section: its first item in its kind
	counts []int // per kind: its items
	zd     *zstd.Decoder
	ls     *loadState
}

// prepare records what decode needs (decodeSections' own state).
func (p *deferredParts) prepare(h Header, secs []Section, starts, counts []int, zd *zstd.Decoder, ls *loadState) {
	p.h, p.secs, p.starts, p.counts, p.zd, p.ls = h, secs, starts, counts, zd, ls
}

// decode decodes the deferred kinds into a Universe of their own, on
// workers goroutines (0: GOMAXPROCS), with the checks a whole load makes
// of them: their parts and the cash actions' order (format 6); then
// core's fund ratio points' source lists are shared with the fund
// reports' (shareFundSources: the lists that core's Dataset holds, read
// by no request until FinishDeferred). The kept bytes are let go as
// each section is done.
func (p *deferredParts) decode(workers int, core *engine.Derived) (*engine.Universe, error) {
	lu := &engine.Universe{}
	for ki, k := range kinds {
		if p.counts[ki] > 0 && deferredKind(k.name) {
			k.alloc(lu, p.counts[ki])
		}
	}
	var order []int
	for _, i := range largestFirst(p.secs) {
		if p.comp[i] != nil {
			order = append(order, i)
		}
	}
	bufs := make(chan []byte, len(order))
	err := parallelWorkers(workers, order, len(order), func(i int) error {
		s := &p.secs[i]
		var buf []byte
		select {
		case buf = <-bufs:
		default:
		}
		if int64(cap(buf)) < s.Raw {
			buf = make([]byte, 0, s.Raw)
		}
		defer func() { bufs <- buf }()
		comp := p.comp[i]
		p.comp[i] = nil
		raw, err := decompress(p.zd, s, i, comp, buf[:0:s.Raw])
		if err != nil {
			return err
		}
		if _, err := decodePart(raw, kindIndex(s.Name), lu, p.starts[i], p.starts[i]+s.Items, p.ls); err != nil {
			return fmt.Errorf("%w: section %d (%s): %v", ErrFormat, i, s.Name, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if p.h.FormatVersion >= columnsVersion {
		if err := checkCashOrder(lu.CashActions); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrFormat, err)
		}
	}
	// The lists are core's (the Dataset's copy of the Universe shares
	// their array): only their elements are replaced.
	v := &engine.Universe{FundReports: lu.FundReports, Derived: *core}
	shareFundSources(v, p.ls)
	return lu, nil
}
