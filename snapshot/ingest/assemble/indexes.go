package assemble

import (
	"context"
	"fmt"
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
// offered: the latest one dated on or before the last session of the
// quotes (a portfolio dated after it cannot be ranked with them), a
// weighted one over a membership list of the same day; else the latest
// one.
type portfolios struct {
	lastSession engine.Date // NoDate: no quotes, every date qualifies
	best        map[string]portfolio
}

type portfolio struct {
	x        engine.Index
	weighted bool
}

// quoted reports whether a portfolio of day d can be ranked with the quotes.
func (p *portfolios) quoted(d engine.Date) bool { return !p.lastSession.Valid() || d <= p.lastSession }

// offer proposes x (weighted: it holds weights, not only members).
func (p *portfolios) offer(x engine.Index, weighted bool) {
	if p.best == nil {
		p.best = map[string]portfolio{}
	}
	old, ok := p.best[x.Symbol]
	switch {
	case !ok, p.quoted(x.AsOf) && !p.quoted(old.x.AsOf):
	case p.quoted(x.AsOf) != p.quoted(old.x.AsOf):
		return
	case x.AsOf > old.x.AsOf, x.AsOf == old.x.AsOf && weighted && !old.weighted:
	default:
		return
	}
	p.best[x.Symbol] = portfolio{x, weighted}
}

func (a *assembler) readIndexes(context.Context, Progress) error {
	choice := portfolios{lastSession: a.lastSession}
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
