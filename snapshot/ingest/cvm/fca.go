package cvm

import (
	"io"
	"sort"
	"strings"

	"github.com/pregao/pregao/engine"
)

// Listing is one row of the FCA valor_mobiliario table
// (fca_cia_aberta_valor_mobiliario_YYYY.csv): one security of a company
// as declared in one version of its FCA.
type Listing struct {
	CompanyID       string      // CNPJ digits (CNPJ_Companhia)
	ReferenceDate   engine.Date // Data_Referencia
	Version         int         // Versao
	DocID           string      // ID_Documento
	CompanyName     string      // Nome_Empresarial
	SecurityType    string      // Valor_Mobiliario as written (Ações Ordinárias, Units, Debêntures...)
	PrefClassCode   string      // Sigla_Classe_Acao_Preferencial (PNA, PNB...)
	PrefClass       string      // Classe_Acao_Preferencial
	Ticker          string      // Codigo_Negociacao, upper-cased; "" for unlisted securities
	StockType       string      // engine Class* constant derived from SecurityType, "" when not a share/unit/BDR
	UnitComposition string      // Composicao_BDR_Unit
	Market          string      // Mercado (Bolsa, Balcão Organizado...)
	Exchange        string      // Sigla_Entidade_Administradora (B3)
	TradingFrom     engine.Date // Data_Inicio_Negociacao
	TradingTo       engine.Date // Data_Fim_Negociacao, NoDate while traded
	Segment         string      // Segmento (Novo Mercado, Nível 2, Tradicional...)
	ListedFrom      engine.Date // Data_Inicio_Listagem
	ListedTo        engine.Date // Data_Fim_Listagem
}

// StockType maps an FCA security type and preferred-class code to an
// engine class: Ações Ordinárias -> CS, Ações Preferenciais -> PS or
// PSA..PSE by the class code (PNA..PNE, or a trailing A..E), Units ->
// UNIT, BDR... -> BDR. Other securities (debentures, notes) give "".
func StockType(securityType, prefCode string) string {
	t := strings.ToUpper(foldString(securityType))
	switch {
	case strings.Contains(t, "ORDINARIA"):
		return engine.ClassCS
	case strings.Contains(t, "PREFERENCIA"):
		c := strings.ToUpper(strings.TrimSpace(prefCode))
		if len(c) > 0 {
			switch c[len(c)-1] {
			case 'A':
				return engine.ClassPSA
			case 'B':
				return engine.ClassPSB
			case 'C':
				return engine.ClassPSC
			case 'D':
				return engine.ClassPSD
			case 'E':
				return engine.ClassPSE
			}
		}
		return engine.ClassPS
	case strings.HasPrefix(t, "UNIT"):
		return engine.ClassUnit
	case strings.Contains(t, "BDR") || strings.Contains(t, "CERTIFICADO DE DEPOSITO"):
		return engine.ClassBDR
	}
	return ""
}

func foldString(s string) string {
	var b strings.Builder
	for _, r := range s {
		b.WriteRune(fold(r))
	}
	return b.String()
}

// ReadValorMobiliario reads an FCA valor_mobiliario table, rows in file
// order. Required columns: CNPJ_Companhia, Data_Referencia, Versao,
// Valor_Mobiliario, Codigo_Negociacao.
func ReadValorMobiliario(r io.Reader, name string, opt Options) ([]Listing, error) {
	rd, err := opt.Open(r, name)
	if err != nil {
		return nil, err
	}
	c, err := rd.requireAll("CNPJ_Companhia", "Data_Referencia", "Versao", "Valor_Mobiliario", "Codigo_Negociacao")
	if err != nil {
		return nil, err
	}
	cDoc, cName := rd.Col("ID_Documento"), rd.Col("Nome_Empresarial", "Nome_Companhia")
	cSig, cCls, cComp := rd.Col("Sigla_Classe_Acao_Preferencial"), rd.Col("Classe_Acao_Preferencial"), rd.Col("Composicao_BDR_Unit")
	cMerc, cEnt := rd.Col("Mercado"), rd.Col("Sigla_Entidade_Administradora")
	dateCols := []int{rd.Col("Data_Inicio_Negociacao"), rd.Col("Data_Fim_Negociacao"), rd.Col("Data_Inicio_Listagem"), rd.Col("Data_Fim_Listagem")}
	cSeg := rd.Col("Segmento")
	var out []Listing
	err = opt.EachRow(rd, func() error {
		var l Listing
		var err error
		if l.CompanyID, l.ReferenceDate, l.Version, err = filingKey(rd, c); err != nil {
			return err
		}
		dst := []*engine.Date{&l.TradingFrom, &l.TradingTo, &l.ListedFrom, &l.ListedTo}
		for j, col := range dateCols {
			d, err := ParseDate(rd.Field(col))
			if err != nil {
				return rd.Errorf(col, "%v: %q", err, rd.Field(col))
			}
			*dst[j] = d
		}
		l.SecurityType = rd.String(c[3])
		l.Ticker = strings.ToUpper(rd.String(c[4]))
		l.DocID = rd.String(cDoc)
		l.CompanyName = rd.String(cName)
		l.PrefClassCode = rd.String(cSig)
		l.PrefClass = rd.String(cCls)
		l.UnitComposition = rd.String(cComp)
		l.Market = rd.String(cMerc)
		l.Exchange = rd.String(cEnt)
		l.Segment = rd.String(cSeg)
		l.StockType = StockType(l.SecurityType, l.PrefClassCode)
		out = append(out, l)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// CurrentListings keeps, for each company, the rows of its latest FCA
// (highest Data_Referencia, then highest Versao) that have a ticker,
// sorted by company and ticker.
func CurrentListings(ls []Listing) []Listing {
	type ver struct {
		ref engine.Date
		v   int
	}
	latest := map[string]ver{}
	for _, l := range ls {
		cur, ok := latest[l.CompanyID]
		if !ok || l.ReferenceDate > cur.ref || (l.ReferenceDate == cur.ref && l.Version > cur.v) {
			latest[l.CompanyID] = ver{l.ReferenceDate, l.Version}
		}
	}
	var out []Listing
	seen := map[string]bool{}
	for _, l := range ls {
		cur := latest[l.CompanyID]
		if l.Ticker == "" || l.ReferenceDate != cur.ref || l.Version != cur.v || seen[l.CompanyID+"/"+l.Ticker] {
			continue
		}
		seen[l.CompanyID+"/"+l.Ticker] = true
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].CompanyID != out[j].CompanyID {
			return out[i].CompanyID < out[j].CompanyID
		}
		return out[i].Ticker < out[j].Ticker
	})
	return out
}

// TickerMap returns ticker -> company_id (CNPJ digits) from the current
// listings (see CurrentListings). A ticker claimed by two companies goes
// to the one whose listing is still traded, then the lower company_id.
func TickerMap(ls []Listing) map[string]string {
	out := map[string]string{}
	open := map[string]bool{}
	for _, l := range CurrentListings(ls) {
		isOpen := !l.TradingTo.Valid()
		prev, ok := out[l.Ticker]
		if !ok || (isOpen && !open[l.Ticker]) || (isOpen == open[l.Ticker] && l.CompanyID < prev) {
			out[l.Ticker] = l.CompanyID
			open[l.Ticker] = isOpen
		}
	}
	return out
}

// ApplyListings completes companies from their current listings: Symbol
// (the first four letters of the first share ticker traded at an
// exchange, by ticker order), ListingSegment (Segmento of that row) and
// IPODate (the earliest Data_Inicio_Listagem, else Data_Inicio_Negociacao,
// of the company's rows) where they are empty. It modifies companies in
// place.
func ApplyListings(companies []engine.Company, ls []Listing) {
	byCo := map[string][]Listing{}
	for _, l := range CurrentListings(ls) {
		byCo[l.CompanyID] = append(byCo[l.CompanyID], l)
	}
	for i := range companies {
		c := &companies[i]
		rows := byCo[c.ID]
		if len(rows) == 0 {
			continue
		}
		for _, l := range rows {
			if l.StockType == "" || len(l.Ticker) < 5 {
				continue
			}
			if c.Symbol == "" {
				c.Symbol = l.Ticker[:4]
			}
			if c.ListingSegment == "" {
				c.ListingSegment = l.Segment
			}
			break
		}
		if !c.IPODate.Valid() || c.IPODate == 0 {
			first := engine.NoDate
			for _, l := range rows {
				d := l.ListedFrom
				if !d.Valid() {
					d = l.TradingFrom
				}
				if d.Valid() && (!first.Valid() || d < first) {
					first = d
				}
			}
			if first.Valid() {
				c.IPODate = first
			}
		}
	}
}

// Securities returns one engine.Security per current listed share, unit
// or BDR ticker (sorted by ticker): company, class, BRL, ListedFrom =
// Data_Inicio_Negociacao, ListedTo = Data_Fim_Negociacao. ISIN is left
// empty (the quote files carry it), UnitFactor Null.
func Securities(ls []Listing) []engine.Security {
	tm := TickerMap(ls)
	var out []engine.Security
	for _, l := range CurrentListings(ls) {
		if l.StockType == "" || tm[l.Ticker] != l.CompanyID {
			continue
		}
		out = append(out, engine.Security{
			Ticker:     l.Ticker,
			CompanyID:  l.CompanyID,
			StockType:  l.StockType,
			Currency:   "BRL",
			UnitFactor: engine.Null,
			ListedFrom: l.TradingFrom,
			ListedTo:   l.TradingTo,
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Ticker < out[j].Ticker })
	return out
}
