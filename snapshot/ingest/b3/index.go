package b3

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/datafile"
)

// Asset is one row of an index portfolio as B3 publishes it.
type Asset struct {
	Ticker string
	Name   string     // "AMBEV S/A"
	Type   string     // "ON      NM": share type and listing segment
	Qty    engine.Num // theoretical quantity, shares
	Weight engine.Num // fraction of the index (Part. % / 100)
}

// Portfolio is an index's theoretical portfolio on one day.
type Portfolio struct {
	Symbol   string      // IBOV, SMLL...
	AsOf     engine.Date // portfolio day; NoDate when the file does not say
	Assets   []Asset     // in file order
	TotalQty engine.Num  // "Quantidade Teórica Total"; Null when absent
	Reductor engine.Num  // "Redutor" (BRL per index point), the file's own digits; Null when absent
}

// Index returns p as an engine.Index named name (the symbol when empty).
func (p *Portfolio) Index(name string) engine.Index {
	if name == "" {
		name = p.Symbol
	}
	x := engine.Index{Symbol: p.Symbol, Name: name, AsOf: p.AsOf, Reductor: p.Reductor, Members: make([]engine.IndexMember, 0, len(p.Assets))}
	for _, a := range p.Assets {
		x.Members = append(x.Members, engine.IndexMember{Ticker: a.Ticker, Weight: a.Weight, TheoreticalQty: a.Qty})
	}
	return x
}

var (
	reDiaName = regexp.MustCompile(`^([A-Z0-9]{2,12})Dia_(\d\d)-(\d\d)-(\d\d)`)
	reTitle   = regexp.MustCompile(`^([A-Z0-9]{2,12}) - Carteira do Dia (\d\d/\d\d/\d\d(?:\d\d)?)`)
)

// ReadIndexCSV reads an index portfolio download (IBOVDia_26-03-21.csv):
// ';'-separated, ISO-8859-1 or UTF-8, an optional title line
// ("IBOV - Carteira do Dia 26/03/21"), a header (Código;Ação;Tipo;Qtde.
// Teórica;Part. (%)), one row per asset and optional footer lines
// ("Quantidade Teórica Total", "Redutor"). Symbol and day come from the
// title, or else from name (IBOVDia_dd-mm-yy). Errors name the file, line
// and column; a field holding a NUL byte is one (datafile.ErrNUL).
func ReadIndexCSV(r io.Reader, name string) (*Portfolio, error) {
	p := &Portfolio{AsOf: engine.NoDate, TotalQty: engine.Null, Reductor: engine.Null}
	base := datafile.BaseName(name)
	if m := reDiaName.FindStringSubmatch(base); m != nil {
		p.Symbol = m[1]
		if d, err := ParseDate(m[2] + "/" + m[3] + "/" + m[4]); err == nil {
			p.AsOf = d
		}
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var col struct{ code, name, typ, qty, part int }
	header := false
	lineNo := 0
	seen := map[string]bool{}
	for sc.Scan() {
		lineNo++
		raw := bytes.TrimRight(sc.Bytes(), "\r")
		if lineNo == 1 {
			raw = bytes.TrimPrefix(raw, []byte("\xef\xbb\xbf"))
		}
		line := datafile.Text(raw)
		if strings.TrimSpace(strings.ReplaceAll(line, ";", "")) == "" {
			continue
		}
		f := strings.Split(line, ";")
		if i := datafile.NULField(f); i >= 0 {
			return nil, fmt.Errorf("%s:%d:%d: %w", name, lineNo, i+1, datafile.ErrNUL)
		}
		for i := range f {
			f[i] = strings.TrimSpace(f[i])
		}
		if !header {
			if m := reTitle.FindStringSubmatch(line); m != nil {
				p.Symbol = m[1]
				d, err := ParseDate(m[2])
				if err != nil {
					return nil, fmt.Errorf("%s:%d:1: title: %v", name, lineNo, err)
				}
				p.AsOf = d
				continue
			}
			col.code, col.name, col.typ, col.qty, col.part = -1, -1, -1, -1, -1
			for i, h := range f {
				h = fold(h)
				switch {
				case strings.HasPrefix(h, "codigo") || strings.HasPrefix(h, "cod"):
					col.code = i
				case strings.HasPrefix(h, "acao") || h == "ativo":
					col.name = i
				case h == "tipo":
					col.typ = i
				case strings.HasPrefix(h, "qtde") || strings.HasPrefix(h, "qtd"):
					col.qty = i
				case strings.HasPrefix(h, "part") && !strings.Contains(h, "acum"):
					col.part = i
				}
			}
			if col.code < 0 || col.qty < 0 || col.part < 0 {
				return nil, fmt.Errorf("%s:%d: want a header with Código, Qtde. Teórica and Part. (%%) columns, got %q", name, lineNo, line)
			}
			header = true
			continue
		}
		first := fold(f[0])
		if first == "" || strings.HasPrefix(first, "quantidade") || strings.HasPrefix(first, "redutor") {
			// Footer: total theoretical quantity or reductor.
			v := engine.Null
			for i := len(f) - 1; i > 0; i-- {
				if f[i] == "" {
					continue
				}
				x, err := ParseNum(f[i])
				if err != nil {
					return nil, fmt.Errorf("%s:%d:%d: %v", name, lineNo, i+1, err)
				}
				if strings.HasPrefix(first, "quantidade") && i == col.part {
					continue
				}
				v = x
				break
			}
			switch {
			case strings.HasPrefix(first, "quantidade"):
				p.TotalQty = v
			case strings.HasPrefix(first, "redutor"):
				p.Reductor = v
			default:
				return nil, fmt.Errorf("%s:%d:1: empty asset code", name, lineNo)
			}
			continue
		}
		need := max(col.code, col.qty, col.part)
		if len(f) <= need {
			return nil, fmt.Errorf("%s:%d: want at least %d fields, got %d", name, lineNo, need+1, len(f))
		}
		a := Asset{Ticker: f[col.code]}
		if !engine.ValidTicker(a.Ticker) {
			return nil, fmt.Errorf("%s:%d:%d: bad ticker %q", name, lineNo, col.code+1, a.Ticker)
		}
		if seen[a.Ticker] {
			return nil, fmt.Errorf("%s:%d:%d: duplicate ticker %q", name, lineNo, col.code+1, a.Ticker)
		}
		seen[a.Ticker] = true
		if col.name >= 0 && col.name < len(f) {
			a.Name = f[col.name]
		}
		if col.typ >= 0 && col.typ < len(f) {
			a.Type = f[col.typ]
		}
		var err error
		if a.Qty, err = ParseNum(f[col.qty]); err != nil || a.Qty.Valid() && a.Qty < 0 {
			return nil, fmt.Errorf("%s:%d:%d: theoretical quantity: %v", name, lineNo, col.qty+1, orNeg(err))
		}
		pct, err := ParseNum(f[col.part])
		if err != nil || pct.Valid() && (pct < 0 || pct > 100) {
			return nil, fmt.Errorf("%s:%d:%d: part (%%): %v", name, lineNo, col.part+1, orNeg(err))
		}
		a.Weight = percentFraction(pct)
		p.Assets = append(p.Assets, a)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if !header {
		return nil, fmt.Errorf("%s: no header line (Código;Ação;Tipo;Qtde. Teórica;Part. (%%))", name)
	}
	if p.Symbol == "" {
		return nil, fmt.Errorf("%s: index symbol unknown: no title line and the name is not SYMBOLDia_dd-mm-yy.csv", name)
	}
	if err := checkWeights(p.Assets); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return p, nil
}

func orNeg(err error) error {
	if err != nil {
		return err
	}
	return fmt.Errorf("out of range")
}

// percentFraction returns the fraction a percentage stands for, from the
// percentage's own decimal digits: "10,523" % is 0.10523, the double
// nearest to the decimal with the point moved two places, not 10.523 / 100
// (0.10523000000000001 in float64).
func percentFraction(pct engine.Num) engine.Num {
	if !pct.Valid() {
		return pct
	}
	digits := strconv.FormatFloat(float64(pct), 'f', -1, 64) // the shortest decimal that reads back as pct
	neg := strings.HasPrefix(digits, "-")
	digits = strings.TrimPrefix(digits, "-")
	whole, frac, _ := strings.Cut(digits, ".")
	whole = strings.Repeat("0", max(0, 3-len(whole))) + whole
	shifted := whole[:len(whole)-2] + "." + whole[len(whole)-2:] + frac
	v, err := strconv.ParseFloat(shifted, 64)
	if err != nil {
		return pct / 100
	}
	if neg {
		v = -v
	}
	return engine.Num(v)
}

// checkWeights rejects a portfolio whose weights do not add up to about
// 100% (B3 rounds each to 0.001%).
func checkWeights(as []Asset) error {
	if len(as) == 0 {
		return fmt.Errorf("portfolio has no asset")
	}
	var sum float64
	for _, a := range as {
		if !a.Weight.Valid() {
			return nil
		}
		sum += float64(a.Weight)
	}
	if tol := 0.0005 * float64(len(as)) / 100; math.Abs(sum-1) > max(tol, 0.002) {
		return fmt.Errorf("weights add up to %.4f%%, want 100%%", sum*100)
	}
	return nil
}

// portfolioJSON is the response of GetTheoricalPortfolio and
// GetPortfolioDay.
type portfolioJSON struct {
	Header struct {
		Date         string `json:"date"`
		Part         string `json:"part"`
		TheoricalQty string `json:"theoricalQty"`
		Reductor     string `json:"reductor"`
	} `json:"header"`
	Results []struct {
		Cod          string `json:"cod"`
		Asset        string `json:"asset"`
		Type         string `json:"type"`
		TheoricalQty string `json:"theoricalQty"`
		Part         string `json:"part"`
	} `json:"results"`
}

// ReadPortfolioJSON reads a GetTheoricalPortfolio or GetPortfolioDay
// response of index symbol. Its day comes from header.date when present
// ("07/04/25" in Portuguese, "04/07/25" in English: 7 April 2025), else
// asOf. Numbers are Brazilian ("3,157") or, when the
// response was asked in English, English ("2.663", "1,243,177,587"): the
// header's total part (100 with three decimals) tells which.
func ReadPortfolioJSON(data []byte, name, symbol string, asOf engine.Date) (*Portfolio, error) {
	var in portfolioJSON
	if err := json.Unmarshal(data, &in); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	p := &Portfolio{Symbol: symbol, AsOf: asOf, TotalQty: engine.Null, Reductor: engine.Null}
	en := english(in.Header.Part, in.Header.Reductor)
	if in.Header.Date != "" {
		ds := in.Header.Date
		if en {
			// English answers date month first: the IBOV portfolio
			// recorded on 2025-04-07 in English says "04/07/25".
			ds = monthFirst(ds)
		}
		d, err := ParseDate(ds)
		if err != nil {
			return nil, fmt.Errorf("%s: header.date: %w", name, err)
		}
		p.AsOf = d
	}
	parse := ParseNum
	if en {
		parse = parseEnglishNum
	}
	var err error
	if p.TotalQty, err = parse(in.Header.TheoricalQty); err != nil {
		return nil, fmt.Errorf("%s: header.theoricalQty: %w", name, err)
	}
	if p.Reductor, err = parse(in.Header.Reductor); err != nil {
		return nil, fmt.Errorf("%s: header.reductor: %w", name, err)
	}
	seen := map[string]bool{}
	for i, r := range in.Results {
		a := Asset{Ticker: strings.TrimSpace(r.Cod), Name: strings.TrimSpace(r.Asset), Type: strings.TrimSpace(r.Type)}
		if !engine.ValidTicker(a.Ticker) || seen[a.Ticker] {
			return nil, fmt.Errorf("%s: results[%d].cod: bad or duplicate ticker %q", name, i, r.Cod)
		}
		seen[a.Ticker] = true
		if a.Qty, err = parse(r.TheoricalQty); err != nil || a.Qty.Valid() && a.Qty < 0 {
			return nil, fmt.Errorf("%s: results[%d].theoricalQty: %v", name, i, orNeg(err))
		}
		pct, err := parse(r.Part)
		if err != nil || pct.Valid() && (pct < 0 || pct > 100) {
			return nil, fmt.Errorf("%s: results[%d].part: %v", name, i, orNeg(err))
		}
		a.Weight = percentFraction(pct)
		p.Assets = append(p.Assets, a)
	}
	if err := checkWeights(p.Assets); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return p, nil
}

// monthFirst turns an English "mm/dd/yy[yy]" into "dd/mm/yy[yy]";
// anything else is returned as is.
func monthFirst(s string) string {
	s = strings.TrimSpace(s)
	if len(s) >= 8 && s[2] == '/' && s[5] == '/' {
		return s[3:5] + "/" + s[0:2] + s[5:]
	}
	return s
}

// english tells English number formatting from the header: the total part
// is "100,000" in Portuguese and "100.000" in English; a reductor with
// both separators ends with the decimal one.
func english(part, reductor string) bool {
	if i, j := strings.LastIndexByte(reductor, '.'), strings.LastIndexByte(reductor, ','); i >= 0 && j >= 0 {
		return i > j
	}
	return strings.TrimSpace(part) == "100.000"
}

// Member is one row of a GetStockIndex response: a listed asset and the
// indexes it belongs to.
type Member struct {
	Ticker  string
	Company string   // "3R PETROLEUM"
	Spec    string   // "ON   NM", "DRN", "CI"
	Indexes []string // "IBOV", "IFIX"...
}

// StockIndex is a GetStockIndex response.
type StockIndex struct {
	AsOf    engine.Date // header.update
	Members []Member
}

// ReadStockIndexJSON reads a GetStockIndex (StockIndexInfo) response.
func ReadStockIndexJSON(data []byte, name string) (*StockIndex, error) {
	var in struct {
		Header struct {
			Update string `json:"update"`
		} `json:"header"`
		Results []struct {
			Company   string `json:"company"`
			Spotlight string `json:"spotlight"`
			Code      string `json:"code"`
			Indexes   string `json:"indexes"`
		} `json:"results"`
	}
	if err := json.Unmarshal(data, &in); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	d, err := ParseDate(in.Header.Update)
	if err != nil {
		return nil, fmt.Errorf("%s: header.update: %w", name, err)
	}
	out := &StockIndex{AsOf: d}
	for i, r := range in.Results {
		m := Member{Ticker: strings.TrimSpace(r.Code), Company: strings.TrimSpace(r.Company), Spec: strings.TrimSpace(r.Spotlight)}
		if !engine.ValidTicker(m.Ticker) {
			return nil, fmt.Errorf("%s: results[%d].code: bad ticker %q", name, i, r.Code)
		}
		for _, x := range strings.Split(r.Indexes, ",") {
			if x = strings.TrimSpace(x); x != "" {
				m.Indexes = append(m.Indexes, x)
			}
		}
		out.Members = append(out.Members, m)
	}
	return out, nil
}

// Indexes returns one engine.Index per index symbol named in s (sorted by
// symbol), each with its members in response order. Weights, quantities
// and the reductor are Null: GetStockIndex lists membership only.
func (s *StockIndex) Indexes() []engine.Index {
	by := map[string]*engine.Index{}
	var syms []string
	for _, m := range s.Members {
		for _, x := range m.Indexes {
			ix := by[x]
			if ix == nil {
				ix = &engine.Index{Symbol: x, Name: x, AsOf: s.AsOf, Reductor: engine.Null}
				by[x] = ix
				syms = append(syms, x)
			}
			dup := false
			for _, e := range ix.Members {
				if e.Ticker == m.Ticker {
					dup = true
				}
			}
			if !dup {
				ix.Members = append(ix.Members, engine.IndexMember{Ticker: m.Ticker, Weight: engine.Null, TheoreticalQty: engine.Null})
			}
		}
	}
	slices.Sort(syms)
	out := make([]engine.Index, 0, len(syms))
	for _, x := range syms {
		out = append(out, *by[x])
	}
	return out
}
