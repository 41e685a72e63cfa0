package snapshot

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"runtime"
	"runtime/debug"
	"slices"

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
// sections are compressed. The ratios are derived for groups of companies
// in turn (see deriveInGroups), so that ratios.Derive's working memory is
// that of one group.
func BuildFromBundle(dir, out string, opt WriteOptions) (Header, error) {
	return BuildFromBundleContext(context.Background(), dir, out, opt)
}

// BuildFromBundleContext is BuildFromBundle stopped by ctx: it checks ctx
// after reading the bundle, before each section it encodes, between the
// groups of companies whose ratios it derives, between the parts it
// writes and before the rename, and returns ctx's error (out untouched,
// its temporary file removed) once ctx ends. The bundle's read and the
// load that checks the written file are not interrupted.
func BuildFromBundleContext(ctx context.Context, dir, out string, opt WriteOptions) (Header, error) {
	var meter bundle.Meter
	if opt.Progress != nil {
		meter = opt.Progress
	}
	if opt.Daily != nil {
		return Header{}, errSpilledDaily
	}
	ropt := bundle.ReadOptions{RequireManifest: opt.RequireManifest, Meter: meter}
	if opt.Version == columnsVersion {
		// Each daily series goes to the build's spill file as the
		// bundle's universe is assembled, as the demo generator's do.
		d, err := NewDailySpill(out)
		if err != nil {
			return Header{}, err
		}
		defer d.Close()
		ropt.Daily, opt.Daily = d.Add, d
	}
	u, err := bundle.ReadWith(dir, ropt)
	if err != nil {
		return Header{}, err
	}
	return buildUniverse(ctx, u, out, opt)
}

// BuildFromUniverseContext is BuildFromBundleContext for a universe
// already in memory (the demo generator's, without a bundle written and
// read back): the same checks, derivation and file as the bundle of u
// would give. It consumes u: its source kinds are released as they are
// encoded, so the caller must not use u afterwards. u.Derived is
// replaced, and its entity slices sorted into the bundle's canonical
// order (bundle.Canonicalize).
func BuildFromUniverseContext(ctx context.Context, u *engine.Universe, out string, opt WriteOptions) (Header, error) {
	bundle.Canonicalize(u)
	return buildUniverse(ctx, u, out, opt)
}

// buildUniverse builds the snapshot of the canonical universe u into out
// (see BuildFromBundleContext).
func buildUniverse(ctx context.Context, u *engine.Universe, out string, opt WriteOptions) (Header, error) {
	if err := ctx.Err(); err != nil {
		return Header{}, err
	}
	version := opt.Version
	if version == 0 {
		version = FormatVersion
	}
	if version != FormatVersion && version != columnsVersion {
		return Header{}, fmt.Errorf("snapshot: format version %d is not written (%d or %d)", version, FormatVersion, columnsVersion)
	}
	c, err := newEncoder(opt)
	if err != nil {
		return Header{}, err
	}
	c.ctx = ctx
	c.version = version
	defer c.zw.Close()
	checked := u
	if opt.Daily != nil {
		if version != columnsVersion {
			return Header{}, errSpilledDaily
		}
		// The daily series hold their tickers, dates and closes; their
		// columns were checked as they were written ahead.
		c.daily = opt.Daily
		checked = &engine.Universe{Intraday: u.Intraday}
	}
	if err := checkSeries(checked); err != nil {
		return Header{}, fmt.Errorf("snapshot: %w", err)
	}
	// The compressed sections and the columns go to disk as they are
	// made, not into memory beside the universe until the end.
	if c.daily != nil {
		// The daily columns are in the spill file already (its owner
		// removes it).
		c.spill = c.daily.s
	} else {
		if c.spill, err = newSpill(out); err != nil {
			return Header{}, err
		}
		defer c.spill.Close()
	}
	nsrc := firstDerivedKind()
	counts := countsOf(u)
	jobs := splitParts(u, 0, nsrc)
	var cols []piece
	var areas []piece // the column area's pieces after the bars, in order
	if version == columnsVersion {
		if err := c.orderCash(u); err != nil {
			return Header{}, err
		}
		if cols, err = c.streamColumns(u, counts); err != nil {
			return Header{}, err
		}
		// The reports part is the heads' index and the source lists.
		jobs = onePart(onePart(onePart(jobs, "daily"), "intraday"), "reports")
		// The reports' accounts and heads follow the bars.
		ac, err := c.streamAccountColumns(u, piecesLen(cols))
		if err != nil {
			return Header{}, err
		}
		c.accounts.first = accountPartFirsts(u, jobs)
		areas = append(areas, ac)
		// The bars are written: keep only what the derivation reads.
		dropKind(u, "intraday")
		keepDerivePrices(u)
	}
	opt.Progress.Begin("encode", "sections", int64(len(jobs)))
	parts, secs, err := c.run(u, jobs, func(k int) {
		if !deriveReads[kinds[k].name] {
			dropKind(u, kinds[k].name)
		}
	})
	if err != nil {
		return Header{}, err
	}
	keepDerivePrices(u)
	areas = append(cols, areas...)
	if version == columnsVersion {
		// The ratio points follow the bars and accounts in the column
		// area, group by group as they are derived: the kind is never
		// whole in memory.
		rc, points, vars, err := c.deriveToColumns(ctx, u, out, piecesLen(areas), opt.Progress)
		if err != nil {
			return Header{}, err
		}
		for k := range nsrc {
			dropKind(u, kinds[k].name)
		}
		if err := checkIndicators(u, true); err != nil {
			return Header{}, fmt.Errorf("snapshot: %w", err)
		}
		for _, k := range kinds[nsrc:] {
			counts[k.name] = k.count(u)
		}
		counts["ratios"], counts[countRatioVars] = int(points), int(vars)
		jobs = nil
		for ki := nsrc; ki < len(kinds); ki++ {
			if kinds[ki].name != "ratios" {
				jobs = append(jobs, splitParts(u, ki, ki+1)...)
			} else if points > 0 {
				jobs = append(jobs, job{k: ki, lo: 0, hi: int(points)})
				areas = append(areas, rc)
			}
		}
		// The fund ratio points follow the ratio points.
		if len(u.Derived.FundRatios) > 0 {
			base, start := piecesLen(areas), c.spill.n
			n, ix, lists, err := writeFundColumns(&u.Derived, func(b []byte) error {
				_, err := c.spill.put(b)
				return err
			})
			if err != nil {
				return Header{}, fmt.Errorf("snapshot: %w", err)
			}
			if c.spill.n-start != n {
				return Header{}, fmt.Errorf("snapshot: spill file: %d bytes of fund ratio columns written, %d made", c.spill.n-start, n)
			}
			c.fund = newFundPart(base, n, ix, lists)
			c.addBlocks(base, ix.Blocks)
			areas = append(areas, piece{off: start, n: n})
			jobs = onePart(jobs, "fund_ratios")
		}
	} else {
		segs, err := deriveInGroups(ctx, u, deriveGroups, opt.Progress)
		if err != nil {
			return Header{}, fmt.Errorf("derive ratios: %w", err)
		}
		for k := range nsrc {
			dropKind(u, kinds[k].name)
		}
		// Collect the sources now: joining the groups allocates the ratio
		// points' array at once (3 GiB at scale 10), faster than the
		// collector would reclaim them.
		runtime.GC()
		u.Derived = joinDerived(segs)
		// Groups are consecutive companies: the joined points keep Derive's
		// order, the one the engine serves without copying (only checked).
		engine.SortRatioPoints(u.Derived.Ratios)
		engine.SortFundRatioPoints(u.Derived.FundRatios)
		if err := checkIndicators(u, true); err != nil {
			return Header{}, fmt.Errorf("snapshot: %w", err)
		}
		for _, k := range kinds[nsrc:] {
			counts[k.name] = k.count(u)
		}
		counts[countRatioVars] = ratioVarsOf(u)
		jobs = splitParts(u, nsrc, len(kinds))
	}
	opt.Progress.Begin("encode ratios", "sections", int64(len(jobs)))
	dparts, dsecs, err := c.run(u, jobs, func(k int) { dropKind(u, kinds[k].name) })
	if err != nil {
		return Header{}, err
	}
	enc, err := assemble(u.Meta, opt, version, c.level, counts, append(parts, dparts...), append(secs, dsecs...), areas...)
	if err != nil {
		return Header{}, err
	}
	enc.spill, enc.freeCopied = c.spill, true
	u = nil // the check below loads the file: leave it the memory
	// Give the build's heap back to the system first: the check's load
	// then adds to nothing (at demo scale 10 the collector would
	// otherwise keep about 8 GB of freed heap resident beside it).
	debug.FreeOSMemory()
	opt.Progress.Begin("write", "", 0)
	check := func(p string) error { return servableWith(p, opt.Progress) }
	if version == columnsVersion {
		// Every column block is verified by reading the file, then the
		// load checks the rest without mapping what it does not read: a
		// build's check holds what a server's start does, not the whole
		// column area (3.1 GB at demo scale 10).
		check = func(p string) error {
			if testBeforeCheck != nil {
				testBeforeCheck(p, enc.h, c)
			}
			if err := verifyColumns(p, enc.h.ColumnsOffset, enc.h.Columns, c.blocks); err != nil {
				return err
			}
			return servableChecked(p, opt.Progress, true)
		}
	}
	if err := writeEncoded(ctx, out, enc, check); err != nil {
		return Header{}, err
	}
	return enc.h, nil
}

// releaseReports zeroes the reports of companies cs, whose ratios are
// derived: no later group reads them (ratios.Derive reads the reports of
// its companies only) and their sections are encoded, so their accounts
// (0.7 GB of the 2.4 GB live at demo scale 10) need not stay in the heap
// while the other groups are derived.
func releaseReports(u *engine.Universe, cs []engine.Company) {
	ids := make(map[string]struct{}, len(cs))
	for i := range cs {
		ids[cs[i].ID] = struct{}{}
	}
	for i := range u.Reports {
		if _, ok := ids[u.Reports[i].CompanyID]; ok {
			u.Reports[i] = engine.Report{}
		}
	}
}

// testBeforeCheck, when set (by tests), is called with the temporary
// file of a format 6 build before its check.
var testBeforeCheck func(path string, h Header, c *encoder)

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

// deriveGroups is the number of company groups BuildFromBundle derives in
// turn.
var deriveGroups = 8

// deriveInGroups runs ratios.Derive on n groups of consecutive companies
// of u (which are sorted by id), each on a Universe that shares every
// slice of u but the companies. Derive works company by company and sorts
// its points by company (funds by fund) first, so the groups' points, in
// group order, are those of one Derive of u; a group's working memory
// (per-company buckets, then their concatenation) is a fraction of the
// whole. u.Companies must be sorted by id (bundle.Read's order).
func deriveInGroups(ctx context.Context, u *engine.Universe, n int, prog *Progress) ([]engine.Derived, error) {
	cs := u.Companies
	prog.Begin("derive ratios", "companies", int64(len(cs)))
	n = max(1, min(n, len(cs)))
	size := (len(cs) + n - 1) / max(n, 1)
	var segs []engine.Derived
	for lo := 0; lo == 0 || lo < len(cs); lo += max(size, 1) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		sub := *u
		sub.Companies = cs[lo:min(lo+size, len(cs))]
		d, err := ratios.Derive(&sub)
		if err != nil {
			return nil, err
		}
		segs = append(segs, d)
		prog.Add(int64(len(sub.Companies)))
	}
	return segs, nil
}

// joinDerived concatenates the groups' points in order (releasing each
// group's as it is copied) under the first group's catalog.
func joinDerived(segs []engine.Derived) engine.Derived {
	var out engine.Derived
	if len(segs) == 0 {
		return out
	}
	out.Catalog = segs[0].Catalog
	if len(segs) == 1 {
		return segs[0]
	}
	nr, nf, nv := 0, 0, 0
	for _, d := range segs {
		nr += len(d.Ratios)
		nf += len(d.FundRatios)
		nv += len(d.RatioVars)
	}
	if nr > 0 {
		out.Ratios = make([]engine.RatioPoint, 0, nr)
	}
	if nf > 0 {
		out.FundRatios = make([]engine.FundRatioPoint, 0, nf)
	}
	if nv > 0 {
		out.RatioVars = make([]engine.Num, 0, nv)
	}
	for i := range segs {
		base, first := uint32(len(out.RatioVars)), len(out.Ratios)
		out.Ratios = append(out.Ratios, segs[i].Ratios...)
		for j := first; j < len(out.Ratios); j++ {
			out.Ratios[j].VarsAt += base // each group's variables follow the previous groups'
		}
		out.RatioVars = append(out.RatioVars, segs[i].RatioVars...)
		out.AppendFundRatios(&segs[i])
		segs[i] = engine.Derived{}
	}
	return out
}

// deriveToColumns derives the ratios of u as deriveInGroups does, and
// writes each group's ratio points to the spill file as the group is
// derived (format 6: the points' columns; their variables, which follow
// every point in the columns, wait in a second spill file), so that no
// more than a group's points are in memory. u.Derived becomes the
// catalog and the fund ratio points (joined: they are small). It
// returns the ratio columns' piece of the spill file, at base bytes into
// the column area, the points and the variables written, and records
// the ratios part in c. The columns are those writeRatioColumns writes
// for the joined groups, byte for byte.
func (c *encoder) deriveToColumns(ctx context.Context, u *engine.Universe, out string, base int64, prog *Progress) (piece, int64, int64, error) {
	vs, err := newSpill(out)
	if err != nil {
		return piece{}, 0, 0, err
	}
	defer vs.Close()
	start := c.spill.n
	r := newRatioWriter(func(b []byte) error {
		_, err := c.spill.put(b)
		return err
	})
	var (
		vbuf []byte
		last engine.RatioPoint // the previous group's last point
		dv   engine.Derived    // the catalog and fund ratio points
	)
	cs := u.Companies
	prog.Begin("derive ratios", "companies", int64(len(cs)))
	n := max(1, min(deriveGroups, len(cs)))
	size := max((len(cs)+n-1)/n, 1)
	for lo, g := 0, 0; lo == 0 || lo < len(cs); lo, g = lo+size, g+1 {
		if err := ctx.Err(); err != nil {
			return piece{}, 0, 0, err
		}
		sub := *u
		sub.Companies = cs[lo:min(lo+size, len(cs))]
		d, err := ratios.Derive(&sub)
		if err != nil {
			return piece{}, 0, 0, fmt.Errorf("derive ratios: %w", err)
		}
		prog.Add(int64(len(sub.Companies)))
		releaseReports(u, sub.Companies)
		engine.SortRatioPoints(d.Ratios)
		if g == 0 {
			dv.Catalog = d.Catalog
		}
		if len(d.Ratios) > 0 {
			if r.ix.Points > 0 && engine.CompareRatioPoints(&last, &d.Ratios[0]) > 0 {
				return piece{}, 0, 0, fmt.Errorf("snapshot: ratio points of company group %d sort before the previous group's", g)
			}
			last = d.Ratios[len(d.Ratios)-1]
		}
		for i := range d.Ratios {
			if p := &d.Ratios[i]; int(p.Indicator) >= len(dv.Catalog) {
				return piece{}, 0, 0, fmt.Errorf("snapshot: ratio point %d (%s): indicator %d beyond the catalog of %d", r.ix.Points+int64(i), p.CompanyID, p.Indicator, len(dv.Catalog))
			}
		}
		if err := r.points(&d); err != nil {
			return piece{}, 0, 0, fmt.Errorf("snapshot: %w", err)
		}
		for i := range d.Ratios {
			for _, v := range d.Vars(&d.Ratios[i]) {
				vbuf = binary.LittleEndian.AppendUint64(vbuf, math.Float64bits(float64(v)))
			}
			if len(vbuf) >= 1<<20 {
				if _, err := vs.put(vbuf); err != nil {
					return piece{}, 0, 0, err
				}
				vbuf = vbuf[:0]
			}
		}
		dv.AppendFundRatios(&d)
	}
	if _, err := vs.put(vbuf); err != nil {
		return piece{}, 0, 0, err
	}
	engine.SortFundRatioPoints(dv.FundRatios)
	u.Derived = dv
	// The variables, run after run, read back in order.
	if _, err := vs.f.Seek(0, io.SeekStart); err != nil {
		return piece{}, 0, 0, fmt.Errorf("snapshot: spill file: %w", err)
	}
	rd := bufio.NewReaderSize(vs.f, 1<<20)
	for ri := range r.ix.Runs {
		var rerr error
		r.runVars(ri, func(b []byte) []byte {
			k := len(b)
			b = slices.Grow(b, int(8*r.ix.Runs[ri].Vars))[:k+int(8*r.ix.Runs[ri].Vars)]
			_, rerr = io.ReadFull(rd, b[k:])
			return b
		})
		if rerr != nil {
			return piece{}, 0, 0, fmt.Errorf("snapshot: spill file: %w", rerr)
		}
	}
	nb, ix, err := r.finish()
	if err != nil {
		return piece{}, 0, 0, err
	}
	if c.spill.n-start != nb {
		return piece{}, 0, 0, fmt.Errorf("snapshot: spill file: %d bytes of ratio columns written, %d made", c.spill.n-start, nb)
	}
	if ix.Points > 0 {
		c.colParts["ratios"] = ratioPart(base, nb, ix)
		c.addBlocks(base, ix.Blocks)
	}
	return piece{off: start, n: nb}, ix.Points, ix.Vars, nil
}
