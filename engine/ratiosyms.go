package engine

import "strings"

// Ratio points read in place from a snapshot file name their company and
// ticker by indexes into the file's own symbol table (Derived.RatioSyms)
// rather than by Syms, which are numbered per process: the points are
// then used where they lie, and only that table is interned. The
// accessors below give a point's Syms either way.

// SymOf returns the Sym a ratio point's CompanyID or Ticker field s
// stands for: s itself, or its entry of RatioSyms when the points index
// it (the zero Sym, "", for an index out of range; Build refuses those).
func (d *Derived) SymOf(s Sym) Sym {
	if d.RatioSyms == nil {
		return s
	}
	if uint64(s) < uint64(len(d.RatioSyms)) {
		return d.RatioSyms[s]
	}
	return 0
}

// RatioTicker returns the ticker a point of the Dataset's ratio series
// prices (RatioPoint.Ticker, as a Sym of the process).
func (d *Dataset) RatioTicker(p *RatioPoint) Sym { return d.u.Derived.SymOf(p.Ticker) }

// RatioCompany returns a point's company id (RatioPoint.CompanyID, as a
// Sym of the process).
func (d *Dataset) RatioCompany(p *RatioPoint) Sym { return d.u.Derived.SymOf(p.CompanyID) }

// compareRatioPointsIn is CompareRatioPoints for points of dv.Ratios.
func compareRatioPointsIn(dv *Derived) func(x, y *RatioPoint) int {
	if dv.RatioSyms == nil {
		return CompareRatioPoints
	}
	return func(x, y *RatioPoint) int {
		if x.CompanyID != y.CompanyID {
			if c := strings.Compare(dv.SymOf(x.CompanyID).String(), dv.SymOf(y.CompanyID).String()); c != 0 {
				return c
			}
		}
		a, b := *x, *y
		a.CompanyID, b.CompanyID = 0, 0
		return CompareRatioPoints(&a, &b)
	}
}
