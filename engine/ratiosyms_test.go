package engine

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// withRatioSyms returns u with its ratio points naming their company and
// ticker by indexes into a table of their own (Derived.RatioSyms), as a
// snapshot's points used in place do, the table in another order than
// the process's Syms.
func withRatioSyms(u *Universe) *Universe {
	c := *u
	c.Derived.Ratios = slices.Clone(u.Derived.Ratios)
	idx := map[Sym]Sym{}
	c.Derived.RatioSyms = []Sym{Intern("")}
	local := func(s Sym) Sym {
		if i, ok := idx[s]; ok {
			return i
		}
		i := Sym(len(c.Derived.RatioSyms))
		idx[s] = i
		c.Derived.RatioSyms = append(c.Derived.RatioSyms, s)
		return i
	}
	// Indexes given from the last point back, so that none is the Sym.
	for i := len(c.Derived.Ratios) - 1; i >= 0; i-- {
		p := &c.Derived.Ratios[i]
		p.CompanyID, p.Ticker = local(p.CompanyID), local(p.Ticker)
	}
	return &c
}

// A Universe whose ratio points index a symbol table builds the same
// Dataset as with Syms: the same series, and every point names the same
// company and ticker through RatioCompany and RatioTicker; an index
// outside the table is refused.
func TestRatioSymsTable(t *testing.T) {
	u := testUniverse(t)
	ref, err := Build(u)
	if err != nil {
		t.Fatal(err)
	}
	lu := withRatioSyms(u)
	if slices.EqualFunc(u.Derived.Ratios, lu.Derived.Ratios, func(x, y RatioPoint) bool { return x.Ticker == y.Ticker && x.CompanyID == y.CompanyID }) {
		t.Fatal("the table's indexes are the Syms: the test proves nothing")
	}
	ds, err := Build(lu)
	if err != nil {
		t.Fatal(err)
	}
	is, _ := ds.Issuer(petroID)
	checkRatioGroups(t, ds, is)
	ris, _ := ref.Issuer(petroID)
	for si := range ris.Ratios() {
		a, b := &ris.Ratios()[si], &is.Ratios()[si]
		for pi := range a.Points {
			p, q := &a.Points[pi], &b.Points[pi]
			if ref.RatioCompany(p) != ds.RatioCompany(q) || ref.RatioTicker(p) != ds.RatioTicker(q) || p.Value != q.Value {
				t.Errorf("series %d point %d: %s/%s, want %s/%s", si, pi, ds.RatioCompany(q), ds.RatioTicker(q), ref.RatioCompany(p), ref.RatioTicker(p))
			}
		}
	}
	if ds.RatioTicker(&is.RatioGroup(1, ClassPS, FreqTTM).Points[0]).String() != "PETR4" {
		t.Error("the PS dividend yield does not price PETR4")
	}

	// Out of order: sorted by the symbols' strings, not their indexes.
	shuffled := withRatioSyms(u)
	slices.Reverse(shuffled.Derived.Ratios)
	ds2, err := Build(shuffled)
	if err != nil {
		t.Fatal(err)
	}
	is2, _ := ds2.Issuer(petroID)
	checkRatioGroups(t, ds2, is2)

	bad := withRatioSyms(u)
	bad.Derived.Ratios[3].Ticker = Sym(len(bad.Derived.RatioSyms))
	if _, err := Build(bad); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "outside the") {
		t.Errorf("a ticker index outside the table: %v", err)
	}
}
