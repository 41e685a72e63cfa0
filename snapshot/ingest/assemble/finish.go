package assemble

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/sectors"
)

// finish puts the companies and the whole sector taxonomy in the
// Universe, places every company on a sub-industry (classify) and writes
// the description and attribution of its metadata.
func (a *assembler) finish(context.Context, Progress) error {
	cos := a.companyList()
	tradingNames := a.b3TradingNames()
	for i := range cos {
		tidyRegistryText(&cos[i], tradingNames[cos[i].ID])
	}
	a.classify(cos)
	a.u.Sectors = sectors.Tree()
	a.u.Companies = cos
	a.u.Meta.Description = "Imported from official open data: " + strings.Join(a.sourcesUsed(), ", ")
	a.u.Meta.Attribution = "Data: B3 S.A. – Brasil, Bolsa, Balcão (market data) and CVM – Comissão de Valores Mobiliários (dados.cvm.gov.br)"
	if len(a.cfg.BCB) > 0 {
		a.u.Meta.Attribution += "; macro series: Banco Central do Brasil (dadosabertos.bcb.gov.br)"
	}
	return nil
}

// classify places each company on a sub-industry by the strongest
// evidence: B3's classification from its company details, else what the
// registry or fund reports gave (CVM SETOR_ATIV, FII segment), else an
// ETF's listed geography, else UnclassifiedID. It counts the sources in
// the report and lists every official value the mapping lacks.
func (a *assembler) classify(cos []engine.Company) {
	b3Class := map[string][]string{}
	for _, d := range a.details {
		if len(d.Industry) > 0 {
			b3Class[d.CNPJ] = d.Industry
		}
	}
	r := a.rep
	r.SectorsBy = map[sectors.Source]int{}
	unmatched := map[string]bool{}
	for i := range cos {
		c := &cos[i]
		src := sectors.None
		if cl, ok := b3Class[c.ID]; ok {
			if id, ok := sectors.FromB3(cl); ok {
				c.SubIndustryID, src = id, sectors.B3
			} else {
				unmatched["B3 classification "+strconv.Quote(strings.Join(cl, " / "))] = true
			}
		}
		if src == sectors.None && c.SubIndustryID != "" {
			src = sectors.CVM
			if c.Kind == engine.KindFII {
				src = sectors.FII
			}
		}
		if src == sectors.None && c.Kind == engine.KindETF {
			if g, ok := a.etfGeo[c.Symbol]; ok {
				if id, ok := sectors.FromETF(g); ok {
					c.SubIndustryID, src = id, sectors.ETF
				} else {
					unmatched["ETF listing Geografia "+strconv.Quote(g)] = true
				}
			}
		}
		if src == sectors.None {
			c.SubIndustryID = sectors.UnclassifiedID
		}
		r.SectorsBy[src]++
	}
	for _, v := range a.cadUnmapped {
		unmatched["CVM SETOR_ATIV "+strconv.Quote(v)] = true
	}
	r.UnmappedSectors = slices.Sorted(maps.Keys(unmatched))
}

// sourcesUsed names the kinds of input the Config lists.
func (a *assembler) sourcesUsed() []string {
	var s []string
	add := func(ok bool, name string) {
		if ok {
			s = append(s, name)
		}
	}
	c := a.cfg
	add(len(c.Cotahist) > 0, "B3 COTAHIST quotes")
	add(len(c.Index) > 0, "B3 index portfolios")
	add(len(c.Cash)+len(c.Supplement)+len(c.Details) > 0, "B3 listed-company data")
	add(len(c.Listings) > 0, "B3 fund listings")
	add(c.Cad != "", "CVM company registry")
	add(len(c.FCA) > 0, "CVM FCA")
	add(len(c.DFP) > 0, "CVM DFP")
	add(len(c.ITR) > 0, "CVM ITR")
	add(len(c.FII) > 0, "CVM FII monthly reports")
	add(len(c.BCB) > 0, "Banco Central SGS series and PTAX rates")
	if len(s) == 0 {
		return []string{"none"}
	}
	return s
}

// b3TradingNames maps each company to the COTAHIST short name (NOMRES, the
// B3 trading name) of its most liquid security.
func (a *assembler) b3TradingNames() map[string]string {
	name := make(map[string]string, len(a.quotes.Securities))
	for _, q := range a.quotes.Securities {
		name[q.Ticker] = q.Name
	}
	out := map[string]string{}
	best := map[string]int{}
	for _, s := range a.u.Securities {
		n := name[s.Ticker]
		if n == "" || s.CompanyID == "" {
			continue
		}
		if r, seen := best[s.CompanyID]; !seen || s.LiquidityRank > 0 && (r == 0 || s.LiquidityRank < r) {
			best[s.CompanyID], out[s.CompanyID] = s.LiquidityRank, n
		}
	}
	return out
}

// tidyRegistryText makes a company's registry text as users expect it:
// runs of spaces in names collapsed, a trading name (the B3 one when the
// registry has none), ISO 3166 country codes for Brazil.
func tidyRegistryText(c *engine.Company, b3Name string) {
	c.Name = collapseSpaces(c.Name)
	c.TradingName = collapseSpaces(c.TradingName)
	if c.TradingName == "" {
		c.TradingName = collapseSpaces(b3Name)
	}
	c.Address.Country = countryCode(c.Address.Country)
}

// collapseSpaces trims s and turns each run of white space into one
// space.
func collapseSpaces(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// countryCode returns the ISO 3166-1 alpha-2 code of the CVM's spellings
// of Brazil ("Brasil", "BRASIL", "BRA"), and other values unchanged.
func countryCode(c string) string {
	switch strings.ToUpper(strings.TrimSpace(c)) {
	case "BRASIL", "BRAZIL", "BRA", "BR":
		return "BR"
	}
	return strings.TrimSpace(c)
}
