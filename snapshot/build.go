package snapshot

import (
	"fmt"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/engine/ratios"
	"github.com/pregao/pregao/snapshot/bundle"
)

// BuildFromBundle reads and validates the source bundle in dir, derives
// the ratio catalog and points, and writes the snapshot to out atomically.
// A bad bundle returns the validation error and leaves out untouched. The
// file is the one WriteFile would write for the bundle and its derived
// data.
//
// The Universe it reads is its own, so it keeps as little of it alive as
// it can (a scale-10 demo bundle holds about 10 GiB of source data and
// derives 3 GiB of ratio points): the source kinds are compressed first;
// those ratios.Derive does not read (intraday bars, indexes, insider
// reports, documents) are released at once, and the daily series keep
// only their dates and closes while the ratios are derived; after Derive,
// the remaining source kinds are released, and each derived kind once its
// sections are compressed.
func BuildFromBundle(dir, out string, opt WriteOptions) (Header, error) {
	u, err := bundle.Read(dir)
	if err != nil {
		return Header{}, err
	}
	c, err := newEncoder(opt)
	if err != nil {
		return Header{}, err
	}
	defer c.zw.Close()
	if err := checkSeries(u); err != nil {
		return Header{}, fmt.Errorf("snapshot: %w", err)
	}
	nsrc := firstDerivedKind()
	counts := countsOf(u)
	parts, secs, err := c.run(u, splitParts(u, 0, nsrc), func(k int) {
		if !deriveReads[kinds[k].name] {
			dropKind(u, kinds[k].name)
		}
	})
	if err != nil {
		return Header{}, err
	}
	keepDerivePrices(u)
	d, err := ratios.Derive(u)
	if err != nil {
		return Header{}, fmt.Errorf("derive ratios: %w", err)
	}
	for k := range nsrc {
		dropKind(u, kinds[k].name)
	}
	u.Derived = d
	if err := checkIndicators(u); err != nil {
		return Header{}, fmt.Errorf("snapshot: %w", err)
	}
	for _, k := range kinds[nsrc:] {
		counts[k.name] = k.count(u)
	}
	dparts, dsecs, err := c.run(u, splitParts(u, nsrc, len(kinds)), func(k int) { dropKind(u, kinds[k].name) })
	if err != nil {
		return Header{}, err
	}
	enc, err := assemble(u.Meta, opt, c.level, counts, append(parts, dparts...), append(secs, dsecs...))
	if err != nil {
		return Header{}, err
	}
	if err := writeEncoded(out, enc); err != nil {
		return Header{}, err
	}
	return enc.h, nil
}

// deriveReads names the source kinds ratios.Derive reads (of the daily
// series, only dates and closes: see keepDerivePrices).
var deriveReads = map[string]bool{
	"sectors": true, "companies": true, "securities": true, "renames": true, "daily": true,
	"reports": true, "shares": true, "cash_actions": true, "share_actions": true, "fund_reports": true,
}

// firstDerivedKind returns the index in kinds of the first kind stored in
// Universe.Derived (they come after every source kind).
func firstDerivedKind() int {
	for i, k := range kinds {
		if k.name == "catalog" {
			return i
		}
	}
	return len(kinds)
}

// keepDerivePrices releases every column of the daily series but the
// dates and closes (bundle.Read allocates the close column on its own).
func keepDerivePrices(u *engine.Universe) {
	for i := range u.Daily {
		s := &u.Daily[i]
		s.Open, s.High, s.Low, s.Volume, s.Quantity, s.Trades = nil, nil, nil, nil, nil, nil
	}
}
