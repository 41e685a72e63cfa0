package assemble

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/b3"
	"github.com/pregao/pregao/snapshot/ingest/cvm"
	"github.com/pregao/pregao/snapshot/ingest/datafile"
)

// addCompany adds c unless a company of its id is known, and returns the
// company of that id: the first one added wins.
func (a *assembler) addCompany(c engine.Company) *engine.Company {
	if old, ok := a.companies[c.ID]; ok {
		return old
	}
	p := &c
	a.companies[c.ID] = p
	return p
}

func (a *assembler) readCad(_ context.Context, prog Progress) error {
	if a.cfg.Cad == "" {
		return nil
	}
	rc, err := datafile.Open(a.cfg.Cad)
	if err != nil {
		return fmt.Errorf("--cad: %w", err)
	}
	defer rc.Close()
	rows, err := cvm.ReadCadRows(rc, plainName(a.cfg.Cad), a.withProgress(prog, "CVM registry"))
	if err != nil {
		return err
	}
	// The registry may be newer than the quotes: each company gets the
	// status in force on the as-of day.
	cos, unmapped, back := cvm.CompaniesOn(rows, a.asOf)
	for _, c := range cos {
		a.addCompany(c)
	}
	a.cadRows = rows
	a.cadUnmapped = unmapped
	a.rep.StatusesTakenBack = back
	return nil
}

func (a *assembler) readFCA(ctx context.Context, prog Progress) error {
	files, err := expand(a.cfg.FCA, isFCA)
	if err != nil {
		return fmt.Errorf("--fca: %w", err)
	}
	opt := a.withProgress(prog, "CVM FCA")
	var all []cvm.Listing
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return err
		}
		base := strings.ToLower(datafile.BaseName(f))
		if strings.HasSuffix(base, ".zip") {
			z, err := cvm.ReadFCAZip(f, opt)
			if err != nil {
				return err
			}
			all = append(all, z.Listings...)
			a.fcaGeneral = append(a.fcaGeneral, z.General...)
			a.fcaAddr = append(a.fcaAddr, z.Addresses...)
			continue
		}
		rc, err := datafile.Open(f)
		if err != nil {
			return err
		}
		switch rest := strings.TrimPrefix(base, "fca_cia_aberta_"); {
		case strings.HasPrefix(rest, "geral"):
			var gs []cvm.GeneralRow
			gs, err = cvm.ReadFCAGeral(rc, plainName(f), opt)
			a.fcaGeneral = append(a.fcaGeneral, gs...)
		case strings.HasPrefix(rest, "endereco"):
			var as []cvm.AddressRow
			as, err = cvm.ReadEndereco(rc, plainName(f), opt)
			a.fcaAddr = append(a.fcaAddr, as...)
		default:
			var ls []cvm.Listing
			ls, err = cvm.ReadValorMobiliario(rc, plainName(f), opt)
			all = append(all, ls...)
		}
		rc.Close()
		if err != nil {
			return err
		}
	}
	if len(all) == 0 {
		return nil
	}
	a.fcaLists = cvm.CurrentListings(all)
	a.tickerCo = cvm.TickerMap(a.fcaLists)
	var unread []string
	a.unitTicker, a.unitCompany, unread = cvm.UnitFactors(a.fcaLists)
	if len(unread) > 0 {
		a.rep.notef("%d unit compositions of the FCA not read (Composicao_BDR_Unit): %s", len(unread), strings.Join(first(unread, 10), "; "))
	}
	a.fcaSecs = map[string]engine.Security{}
	for _, s := range cvm.Securities(a.fcaLists) {
		a.fcaSecs[s.Ticker] = s
	}
	return nil
}

func (a *assembler) readDetails(context.Context, Progress) error {
	files, err := expand(a.cfg.Details, isJSON)
	if err != nil {
		return fmt.Errorf("--details: %w", err)
	}
	for _, f := range files {
		b, err := datafile.ReadFile(f)
		if err != nil {
			return err
		}
		d, err := b3.ReadDetails(b, f)
		if err != nil {
			return err
		}
		if d.CNPJ == "" {
			a.rep.notef("%s: no CNPJ, ignored", f)
			continue
		}
		a.details = append(a.details, d)
		if _, ok := a.companies[d.CNPJ]; !ok {
			a.addCompany(engine.Company{ID: d.CNPJ, CVMCode: d.CVMCode, Name: d.Name, TradingName: d.TradingName, Kind: engine.KindCompany,
				Website: d.Website, Employees: -1, FreeFloat: engine.Null, FoundingDate: engine.NoDate, IPODate: engine.NoDate, Status: d.Status,
				StatusDate: engine.NoDate})
		}
	}
	return nil
}

// readInstruments reads B3's listed-instruments files. Of a ticker's (and
// an ISIN's) rows it keeps the one of the day nearest the last session
// of the quotes: the latest on or before it, else the earliest after.
func (a *assembler) readInstruments(_ context.Context, prog Progress) error {
	files, err := expand(a.cfg.Instruments, isListing)
	if err != nil {
		return fmt.Errorf("--instruments: %w", err)
	}
	if len(files) == 0 {
		return nil
	}
	a.instrTicker, a.instrISIN = map[string]b3.Instrument{}, map[string]b3.Instrument{}
	nearer := func(in, old b3.Instrument) bool {
		last := a.lastSession
		if !last.Valid() {
			return in.Day > old.Day
		}
		inOK, oldOK := in.Day <= last, old.Day <= last
		if inOK != oldOK {
			return inOK
		}
		if inOK {
			return in.Day > old.Day
		}
		return in.Day < old.Day
	}
	for _, f := range files {
		if prog != nil {
			prog("B3 instruments " + filepath.Base(f))
		}
		rc, err := datafile.Open(f)
		if err != nil {
			return err
		}
		ins, st, err := b3.ReadInstruments(rc, f, a.cfg.Lenient)
		rc.Close()
		if err != nil {
			return fmt.Errorf("--instruments: %w", err)
		}
		a.rep.Instruments.Rows += st.Rows
		a.rep.Instruments.Other += st.Other
		a.rep.Instruments.BadTicker += st.BadTicker
		a.rep.Instruments.Malformed += st.Malformed
		for _, in := range ins {
			if old, ok := a.instrTicker[in.Ticker]; !ok || nearer(in, old) {
				a.instrTicker[in.Ticker] = in
			}
			if in.ISIN == "" {
				continue
			}
			if old, ok := a.instrISIN[in.ISIN]; !ok || nearer(in, old) {
				a.instrISIN[in.ISIN] = in
			}
		}
	}
	return nil
}

func (a *assembler) readListings(context.Context, Progress) error {
	files, err := expand(a.cfg.Listings, isListing)
	if err != nil {
		return fmt.Errorf("--listings: %w", err)
	}
	for _, f := range files {
		rc, err := datafile.Open(f)
		if err != nil {
			return err
		}
		ls, bad, err := b3.ReadListings(rc, f, a.cfg.Lenient)
		rc.Close()
		if err != nil {
			return err
		}
		if bad > 0 {
			a.rep.notef("%s: %d malformed codes skipped", f, bad)
		}
		// A fund list names real-estate funds (fundosListados, FII);
		// every other export lists ETFs.
		fiiList := strings.Contains(strings.ToLower(filepath.Base(f)), "fundo") || strings.Contains(strings.ToLower(filepath.Base(f)), "fii")
		for _, l := range ls {
			if fiiList {
				a.fiiCodes[l.Symbol()] = true
			} else {
				a.etfSyms[l.Symbol()] = true
				if l.Geography != "" {
					a.etfGeo[l.Symbol()] = l.Geography
				}
			}
		}
	}
	return nil
}

// uniqueSymbols clears a symbol claimed by a second company (the first by
// company_id keeps it).
func (a *assembler) uniqueSymbols() {
	seen := map[string]bool{}
	for _, c := range a.companyList() {
		if c.Symbol == "" {
			continue
		}
		if seen[c.Symbol] {
			a.companies[c.ID].Symbol = ""
			continue
		}
		seen[c.Symbol] = true
	}
}

// companyList returns a copy of every company, by company_id.
func (a *assembler) companyList() []engine.Company {
	ids := make([]string, 0, len(a.companies))
	for id := range a.companies {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	out := make([]engine.Company, len(ids))
	for i, id := range ids {
		out[i] = *a.companies[id]
	}
	return out
}
