package assemble

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/b3"
	"github.com/pregao/pregao/snapshot/ingest/datafile"
)

// indexNames are the display names of the B3 indexes seen in the files.
var indexNames = map[string]string{
	"IBOV": "Ibovespa", "IBRA": "Índice Brasil Amplo", "IBXX": "Índice Brasil 100", "IBXL": "Índice Brasil 50",
	"SMLL": "Índice Small Cap", "MLCX": "Índice MidLarge Cap", "IDIV": "Índice Dividendos", "IFIX": "Índice de Fundos de Investimentos Imobiliários",
	"IFIL": "Índice de Fundos Imobiliários de Alta Liquidez", "BDRX": "Índice de BDRs Não Patrocinados", "UTIL": "Índice Utilidade Pública",
	"IEEX": "Índice de Energia Elétrica", "IFNC": "Índice Financeiro", "IMAT": "Índice de Materiais Básicos", "IMOB": "Índice Imobiliário",
	"INDX": "Índice do Setor Industrial", "ICON": "Índice de Consumo", "ISEE": "Índice de Sustentabilidade Empresarial",
	"ICO2": "Índice Carbono Eficiente", "IGCT": "Índice de Governança Corporativa Trade", "IGCX": "Índice de Ações com Governança Corporativa Diferenciada",
	"IGNM": "Índice de Governança Corporativa – Novo Mercado", "ITAG": "Índice de Ações com Tag Along Diferenciado",
	"IVBX": "Índice Valor", "GPTW": "Índice GPTW",
}

// portfolios keeps, per index symbol, the portfolio to import among those
// offered: the latest one dated on or before the as-of day (a weighted
// one over a membership list of the same day; of two alike, the first);
// when none is, the earliest one after it, the closest to that day. It
// remembers the days of every offer, for the summary.
type portfolios struct {
	asOf engine.Date // NoDate: every day qualifies
	best map[string]portfolio
	days map[string][]engine.Date // every day offered, per symbol
}

type portfolio struct {
	x        engine.Index
	weighted bool
}

// within reports whether a portfolio of day d is on or before the as-of
// day.
func (p *portfolios) within(d engine.Date) bool { return !p.asOf.Valid() || d <= p.asOf }

// offer proposes x (weighted: it holds weights, not only members).
func (p *portfolios) offer(x engine.Index, weighted bool) {
	if p.best == nil {
		p.best, p.days = map[string]portfolio{}, map[string][]engine.Date{}
	}
	p.days[x.Symbol] = append(p.days[x.Symbol], x.AsOf)
	old, ok := p.best[x.Symbol]
	in, oldIn := p.within(x.AsOf), ok && p.within(old.x.AsOf)
	switch {
	case !ok, in && !oldIn:
	case in != oldIn:
		return
	case x.AsOf == old.x.AsOf:
		if !weighted || old.weighted {
			return
		}
	case in && x.AsOf < old.x.AsOf, !in && x.AsOf > old.x.AsOf:
		return
	}
	p.best[x.Symbol] = portfolio{x, weighted}
}

// notes says, for the summary, which portfolio of each index is served
// and which were passed over.
func (p *portfolios) notes(r *Report) {
	var after []string
	for _, s := range slices.Sorted(maps.Keys(p.best)) {
		x := p.best[s].x
		if !p.within(x.AsOf) {
			after = append(after, s+" "+x.AsOf.String())
		}
		var others []string
		for _, d := range p.days[s] {
			if d == x.AsOf {
				continue
			}
			o := d.String()
			if !p.within(d) {
				o += " (after the as-of day)"
			}
			others = append(others, o)
		}
		if len(others) > 0 && p.within(x.AsOf) {
			r.notef("index %s: the portfolio of %s is served, the latest on or before the as-of day %s; passed over: %s", s, x.AsOf, p.asOf, strings.Join(others, ", "))
		} else if len(others) > 0 {
			r.notef("index %s: no portfolio on or before the as-of day %s; the earliest after it (%s) is served; passed over: %s", s, p.asOf, x.AsOf, strings.Join(others, ", "))
		}
	}
	if len(after) > 0 {
		r.notef("%d indexes have no portfolio on or before the as-of day %s and are served with the earliest one after it: %s", len(after), p.asOf, strings.Join(after, ", "))
	}
}

func (a *assembler) readIndexes(context.Context, Progress) error {
	choice := portfolios{asOf: a.asOf}
	for _, v := range a.cfg.Index {
		sym, p := symbolPath(v)
		files, err := expand([]string{p}, func(b string) bool { return isIndex(b) })
		if err != nil {
			return fmt.Errorf("--index: %w", err)
		}
		for _, f := range files {
			b, err := datafile.ReadFile(f)
			if err != nil {
				return err
			}
			trim := strings.TrimLeft(string(b[:min(len(b), 64)]), " \t\r\n\xef\xbb\xbf")
			switch {
			case strings.HasPrefix(trim, "{") && strings.Contains(string(b), `"indexes"`):
				s, err := b3.ReadStockIndexJSON(b, f)
				if err != nil {
					return err
				}
				for _, x := range s.Indexes() {
					choice.offer(x, false)
				}
			case strings.HasPrefix(trim, "{"):
				if sym == "" {
					return fmt.Errorf("--index %s: a portfolio response names no index: give SYMBOL=%s", v, p)
				}
				asOf := a.asOf
				pf, err := b3.ReadPortfolioJSON(b, f, sym, asOf)
				if err != nil {
					return err
				}
				choice.offer(pf.Index(indexNames[sym]), true)
			default:
				pf, err := b3.ReadIndexCSV(strings.NewReader(string(b)), f)
				if err != nil {
					return err
				}
				choice.offer(pf.Index(indexNames[pf.Symbol]), true)
			}
		}
	}
	choice.notes(a.rep)
	known := map[string]bool{}
	for _, s := range a.u.Securities {
		known[s.Ticker] = true
	}
	syms := make([]string, 0, len(choice.best))
	for s := range choice.best {
		syms = append(syms, s)
	}
	sort.Strings(syms)
	for _, s := range syms {
		x := choice.best[s].x
		if x.Name == "" || x.Name == x.Symbol {
			if n := indexNames[s]; n != "" {
				x.Name = n
			}
		}
		// Every member is kept: one without quotes yet (a new listing, or
		// a portfolio dated after the quotes) is served in the portfolio
		// and ranked once it trades.
		unquoted := 0
		for _, m := range x.Members {
			if !known[m.Ticker] {
				unquoted++
			}
		}
		a.rep.UnquotedMembers += unquoted
		if unquoted == len(x.Members) && len(x.Members) > 0 {
			a.rep.notef("index %s: none of its %d members is among the quoted tickers; its portfolio is kept, its rankings are empty", s, len(x.Members))
		}
		a.u.Indexes = append(a.u.Indexes, x)
	}
	return nil
}
