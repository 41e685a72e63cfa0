package official

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/sectors"
)

func (w *writer) b3Jobs() []func() error {
	jobs := []func() error{w.writeListings}
	for i := range w.u.Indexes {
		x := &w.u.Indexes[i]
		if len(x.Members) == 0 {
			continue
		}
		jobs = append(jobs, func() error { return w.writeIndex(x) })
	}
	return append(jobs, w.writeCompanies)
}

// nomres is a company's COTAHIST short name (NOMRES: 12 characters).
func nomres(c *engine.Company) string {
	n := []rune(strings.ToUpper(c.TradingName))
	if len(n) > 12 {
		n = n[:12]
	}
	return strings.TrimSpace(string(n))
}

// writeIndex writes x as B3's GetPortfolioDay answer (Portuguese:
// Brazilian numbers, header.date dd/mm/yy), stored as pregao fetch
// stores it: SYMBOL/YYYY-MM-DD.json. Part (%) has B3's three decimals,
// theoretical quantities are shares, the reductor keeps its digits.
func (w *writer) writeIndex(x *engine.Index) error {
	type result struct {
		Segment      *string `json:"segment"`
		Cod          string  `json:"cod"`
		Asset        string  `json:"asset"`
		Type         string  `json:"type"`
		Part         string  `json:"part"`
		PartAcum     *string `json:"partAcum"`
		TheoricalQty string  `json:"theoricalQty"`
	}
	var out struct {
		Page struct {
			PageNumber   int `json:"pageNumber"`
			PageSize     int `json:"pageSize"`
			TotalRecords int `json:"totalRecords"`
			TotalPages   int `json:"totalPages"`
		} `json:"page"`
		Header struct {
			Date         string  `json:"date"`
			Text         string  `json:"text"`
			Part         string  `json:"part"`
			PartAcum     *string `json:"partAcum"`
			TextReductor string  `json:"textReductor"`
			Reductor     string  `json:"reductor"`
			TheoricalQty string  `json:"theoricalQty"`
		} `json:"header"`
		Results []result `json:"results"`
	}
	y, m, d := x.AsOf.Time().Date()
	var total float64
	for _, mb := range x.Members {
		name, spec := "", ""
		if s := w.byTick[mb.Ticker]; s != nil {
			if c := w.company[s.CompanyID]; c != nil {
				name = nomres(c)
				spec = specWord(s.StockType, s.Ticker, c.BDRSponsored)
				if seg := segmentCode(c.ListingSegment); seg != "" && c.Kind == engine.KindCompany {
					spec = fmt.Sprintf("%-8s%s", spec, seg)
				}
			}
		}
		r := result{Cod: mb.Ticker, Asset: name, Type: spec}
		if mb.TheoreticalQty.Valid() {
			total += float64(mb.TheoreticalQty)
			r.TheoricalQty = brDec(mb.TheoreticalQty)
		}
		if mb.Weight.Valid() {
			r.Part = strings.Replace(fmt.Sprintf("%.3f", float64(mb.Weight)*100), ".", ",", 1)
		}
		out.Results = append(out.Results, r)
	}
	out.Page.PageNumber, out.Page.PageSize, out.Page.TotalRecords, out.Page.TotalPages = 1, len(out.Results), len(out.Results), 1
	out.Header.Date = fmt.Sprintf("%02d/%02d/%02d", d, int(m), y%100)
	out.Header.Text = "Quantidade Teórica Total"
	out.Header.Part = "100,000"
	out.Header.TextReductor = "Redutor"
	out.Header.Reductor = brDec(x.Reductor)
	out.Header.TheoricalQty = brDec(engine.Num(total))
	w.add(func(s *Stats) { s.Indexes++ })
	return w.writeJSON(fmt.Sprintf("%s/%s/%s.json", IndexDir, x.Symbol, x.AsOf), out)
}

// firstMapped is the first value of src's mapping table that maps to
// sub-industry id (package sectors), "" when none does.
func firstMapped(src sectors.Source, id string) string {
	if m := sectors.Mapped(src, id); len(m) > 0 {
		return m[0]
	}
	return ""
}

// brDec is v with '.' grouping thousands and, when fractional, a decimal
// comma followed by v's own decimal digits ("18.296.803,37677573"); ""
// for a missing value.
func brDec(v engine.Num) string {
	s := decimal(v)
	if s == "" {
		return ""
	}
	whole, frac, _ := strings.Cut(s, ".")
	neg := strings.HasPrefix(whole, "-")
	n, _ := strconv.ParseInt(strings.TrimPrefix(whole, "-"), 10, 64)
	out := brInt(n)
	if neg {
		out = "-" + out
	}
	if frac != "" {
		out += "," + frac
	}
	return out
}

// pctOf is f as a percentage, written from f's own decimal digits
// (0.1768 -> "17,68"), so that reading it back as a fraction of 100
// gives f exactly.
func pctOf(f engine.Num) string {
	s := decimal(f)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	whole, frac, _ := strings.Cut(s, ".")
	frac += "00"
	whole, frac = strings.TrimLeft(whole+frac[:2], "0"), strings.TrimRight(frac[2:], "0")
	if whole == "" {
		whole = "0"
	}
	if neg {
		whole = "-" + whole
	}
	if frac == "" {
		return whole
	}
	return whole + "," + frac
}

// writeListings writes B3's fund listing exports (GetListFundDownload,
// decoded: ';'-separated ISO-8859-1): the ETFs (etfsListados.csv) and
// the listed FIIs (fundosListados.csv), by 4-character code.
func (w *writer) writeListings() error {
	var etfs, fiis []*engine.Company
	for i := range w.u.Companies {
		switch c := &w.u.Companies[i]; c.Kind {
		case engine.KindETF:
			etfs = append(etfs, c)
		case engine.KindFII:
			fiis = append(fiis, c)
		}
	}
	err := w.writeFile(ListingDir+"/etfsListados.csv", func(out io.Writer) error {
		r := &csvRow{w: out}
		if err := r.write("Razão Social", "Fundo", "Emissor", "Código", "Índice", "Geografia", "Mercado"); err != nil {
			return err
		}
		for _, c := range etfs {
			if err := r.write(c.Name, c.TradingName, "", c.Symbol, "", firstMapped(sectors.ETF, c.SubIndustryID), "Bolsa"); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return w.writeFile(ListingDir+"/fundosListados.csv", func(out io.Writer) error {
		r := &csvRow{w: out}
		if err := r.write("Razão Social", "Fundo", "Segmento", "Código"); err != nil {
			return err
		}
		for _, c := range fiis {
			if err := r.write(c.Name, c.TradingName, "", c.Symbol); err != nil {
				return err
			}
		}
		return nil
	})
}

// currentCash returns the current version of every cash event of the
// company, by prior-ex date, approval date and ticker.
func currentCash(cas []*engine.CashAction) []*engine.CashAction {
	best := map[string]*engine.CashAction{}
	var ids []string
	for _, c := range cas {
		b, ok := best[c.EventID]
		if !ok {
			ids = append(ids, c.EventID)
		}
		if !ok || c.Version > b.Version {
			best[c.EventID] = c
		}
	}
	out := make([]*engine.CashAction, 0, len(ids))
	for _, id := range ids {
		out = append(out, best[id])
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.PriorExDate != b.PriorExDate {
			return a.PriorExDate > b.PriorExDate
		}
		if a.ApprovalDate != b.ApprovalDate {
			return a.ApprovalDate > b.ApprovalDate
		}
		return a.Ticker.String() < b.Ticker.String()
	})
	return out
}

// pct is the percentage B3 writes for a fraction f - base ("200" for a
// 1:3 split, f 3 and base 1), rounded to 10 decimals, Brazilian form.
func pct(f, base engine.Num) string {
	v := math.Round(float64(f-base)*100*1e10) / 1e10
	return brNum(engine.Num(v))
}

// writeCompanies writes the listed-company responses of every issuer
// with quoted tickers: GetListedCashDividends and
// GetListedSupplementCompany for each, GetDetailsCompany for companies.
func (w *writer) writeCompanies() error {
	cash := map[string][]*engine.CashAction{}
	for i := range w.u.CashActions {
		c := &w.u.CashActions[i]
		cash[c.CompanyID.String()] = append(cash[c.CompanyID.String()], c)
	}
	share := map[string][]*engine.ShareAction{}
	for i := range w.u.ShareActions {
		a := &w.u.ShareActions[i]
		share[a.CompanyID] = append(share[a.CompanyID], a)
	}
	for i := range w.u.Companies {
		c := &w.u.Companies[i]
		if c.Symbol == "" || len(w.secs[c.ID]) == 0 {
			continue
		}
		cur := currentCash(cash[c.ID])
		if len(cur) > 0 {
			if err := w.writeCash(c, cur); err != nil {
				return err
			}
		}
		if err := w.writeSupplement(c, cur, share[c.ID]); err != nil {
			return err
		}
		if c.Kind == engine.KindCompany && len(c.ID) == 14 {
			if err := w.writeDetails(c); err != nil {
				return err
			}
		}
	}
	return nil
}

func (w *writer) writeJSON(rel string, v any) error {
	return w.writeFile(rel, func(out io.Writer) error {
		enc := json.NewEncoder(out)
		enc.SetEscapeHTML(false)
		return enc.Encode(v)
	})
}

// typeStock is B3's share-type label of a cash event's class.
func (w *writer) typeStock(ca *engine.CashAction) string {
	sponsored := false
	if c := w.company[ca.CompanyID.String()]; c != nil {
		sponsored = c.BDRSponsored
	}
	return specWord(ca.StockType.String(), ca.Ticker.String(), sponsored)
}

func (w *writer) writeCash(c *engine.Company, cur []*engine.CashAction) error {
	type result struct {
		TypeStock       string `json:"typeStock"`
		DateApproval    string `json:"dateApproval"`
		ValueCash       string `json:"valueCash"`
		Ratio           string `json:"ratio"`
		CorporateAction string `json:"corporateAction"`
		LastDatePriorEx string `json:"lastDatePriorEx"`
		QuotedPerShares string `json:"quotedPerShares"`
		LastDateTime    string `json:"lastDateTimePriorEx"`
	}
	var out struct {
		Page struct {
			PageNumber   int `json:"pageNumber"`
			PageSize     int `json:"pageSize"`
			TotalRecords int `json:"totalRecords"`
			TotalPages   int `json:"totalPages"`
		} `json:"page"`
		Results []result `json:"results"`
	}
	for _, ca := range cur {
		out.Results = append(out.Results, result{
			TypeStock: w.typeStock(ca), DateApproval: brDate(ca.ApprovalDate), ValueCash: brNum(ca.DeclaredValue), Ratio: "1",
			CorporateAction: ca.Code.String(), LastDatePriorEx: brDate(ca.PriorExDate), QuotedPerShares: "1",
			LastDateTime: isoDate(ca.PriorExDate) + "T00:00:00",
		})
	}
	out.Page.PageNumber, out.Page.PageSize, out.Page.TotalRecords, out.Page.TotalPages = 1, 9999, len(out.Results), 1
	w.add(func(s *Stats) { s.CashEvents += len(cur) })
	return w.writeJSON(CashDir+"/"+c.Symbol+".json", out)
}

func (w *writer) writeSupplement(c *engine.Company, cur []*engine.CashAction, acts []*engine.ShareAction) error {
	type cashOut struct {
		AssetIssued   string `json:"assetIssued"`
		PaymentDate   string `json:"paymentDate"`
		Rate          string `json:"rate"`
		RelatedTo     string `json:"relatedTo"`
		ApprovedOn    string `json:"approvedOn"`
		ISINCode      string `json:"isinCode"`
		Label         string `json:"label"`
		LastDatePrior string `json:"lastDatePrior"`
		Remarks       string `json:"remarks"`
	}
	type stockOut struct {
		AssetIssued   string `json:"assetIssued"`
		Factor        string `json:"factor"`
		ApprovedOn    string `json:"approvedOn"`
		ISINCode      string `json:"isinCode"`
		Label         string `json:"label"`
		LastDatePrior string `json:"lastDatePrior"`
		Remarks       string `json:"remarks"`
	}
	type subOut struct {
		AssetIssued      string `json:"assetIssued"`
		Percentage       string `json:"percentage"`
		PriceUnit        string `json:"priceUnit"`
		TradingPeriod    string `json:"tradingPeriod"`
		SubscriptionDate string `json:"subscriptionDate"`
		ApprovedOn       string `json:"approvedOn"`
		ISINCode         string `json:"isinCode"`
		Label            string `json:"label"`
		LastDatePrior    string `json:"lastDatePrior"`
		Remarks          string `json:"remarks"`
	}
	type supp struct {
		StockCapital          string     `json:"stockCapital"`
		TradingName           string     `json:"tradingName"`
		NumberCommonShares    string     `json:"numberCommonShares"`
		NumberPreferredShares string     `json:"numberPreferredShares"`
		TotalNumberShares     string     `json:"totalNumberShares"`
		Code                  string     `json:"code"`
		CodeCVM               string     `json:"codeCVM"`
		Segment               string     `json:"segment"`
		CashDividends         []cashOut  `json:"cashDividends"`
		StockDividends        []stockOut `json:"stockDividends"`
		Subscriptions         []subOut   `json:"subscriptions"`
	}
	s := supp{TradingName: nomres(c), Code: c.Symbol, CodeCVM: c.CVMCode, Segment: "BOLSA",
		CashDividends: []cashOut{}, StockDividends: []stockOut{}, Subscriptions: []subOut{}}
	if p, ok := w.sharesAt(c.ID, w.asOf); ok && c.Kind == engine.KindCompany {
		s.NumberCommonShares, s.NumberPreferredShares, s.TotalNumberShares = brInt(p.Common), brInt(p.Preferred), brInt(p.Common+p.Preferred)
	}
	for _, ca := range cur {
		s.CashDividends = append(s.CashDividends, cashOut{AssetIssued: ca.ISIN.String(), PaymentDate: brDate(ca.PaymentDate),
			Rate: brNum(ca.DeclaredValue), ApprovedOn: brDate(ca.ApprovalDate), ISINCode: ca.ISIN.String(), Label: ca.Code.String(),
			LastDatePrior: brDate(ca.PriorExDate)})
	}
	n := 0
	rec := func(a *engine.ShareAction, issued, factor string) stockOut {
		return stockOut{AssetIssued: issued, Factor: factor, ApprovedOn: brDate(a.ApprovalDate), ISINCode: a.ISIN,
			Label: a.Label, LastDatePrior: brDate(a.PriorExDate), Remarks: a.Remarks}
	}
	for _, a := range acts {
		switch a.Type {
		case engine.ActSubscription:
			s.Subscriptions = append(s.Subscriptions, subOut{AssetIssued: a.IssuedISIN, Percentage: pct(a.Factor, 1),
				ApprovedOn: brDate(a.ApprovalDate), ISINCode: a.ISIN, Label: a.Label, LastDatePrior: brDate(a.PriorExDate), Remarks: a.Remarks})
		case engine.ActStockSplit, engine.ActStockBonus: // the percentage added
			s.StockDividends = append(s.StockDividends, rec(a, a.IssuedISIN, pct(a.Factor, 1)))
		case engine.ActReverseSplit: // the multiplier (0,10 for 10:1)
			s.StockDividends = append(s.StockDividends, rec(a, a.IssuedISIN, brNum(a.Factor)))
		case engine.ActTotalRedemption: // the percentage of the shares redeemed: all of them
			redeemed := "100"
			if a.Factor.Valid() {
				redeemed = pctOf(1 - a.Factor)
			}
			s.StockDividends = append(s.StockDividends, rec(a, a.IssuedISIN, redeemed))
		default: // legged events: one record per leg, as B3 lists them
			for _, l := range a.Legs {
				switch {
				case l.LegType == engine.LegReceived && l.Factor.Valid() && l.Factor > 0:
					s.StockDividends = append(s.StockDividends, rec(a, l.ISIN, pctOf(l.Factor)))
				case l.LegType == engine.LegOriginal && l.Factor.Valid() && l.Factor > 0 && l.Factor != 1:
					s.StockDividends = append(s.StockDividends, rec(a, a.ISIN, pctOf(l.Factor)))
				}
			}
		}
		n++
	}
	w.add(func(st *Stats) { st.ShareEvents += n })
	return w.writeJSON(SuppDir+"/"+c.Symbol+".json", []supp{s})
}

func (w *writer) writeDetails(c *engine.Company) error {
	type code struct {
		Code string `json:"code"`
		ISIN string `json:"isin"`
	}
	type details struct {
		IssuingCompany         string `json:"issuingCompany"`
		CompanyName            string `json:"companyName"`
		TradingName            string `json:"tradingName"`
		CNPJ                   string `json:"cnpj"`
		IndustryClassification string `json:"industryClassification"`
		Activity               string `json:"activity"`
		Website                string `json:"website"`
		Status                 string `json:"status"`
		Market                 string `json:"market"`
		Code                   string `json:"code"`
		CodeCVM                string `json:"codeCVM"`
		OtherCodes             []code `json:"otherCodes"`
	}
	d := details{IssuingCompany: c.Symbol, CompanyName: c.Name, TradingName: nomres(c), CNPJ: c.ID,
		Activity: c.Description, Website: c.Website, Status: "A", Market: "BOLSA", CodeCVM: c.CVMCode, OtherCodes: []code{}}
	if c.Status != "ACTIVE" {
		d.Status = "I"
	}
	// B3's "Setor / Subsetor / Segmento": the Portuguese names of the
	// taxonomy's levels 1, 2 and 4 (package sectors).
	d.IndustryClassification, _ = sectors.B3Classification(c.SubIndustryID)
	for _, s := range w.secs[c.ID] {
		if d.Code == "" {
			d.Code = s.Ticker
		}
		d.OtherCodes = append(d.OtherCodes, code{s.Ticker, s.ISIN})
	}
	return w.writeJSON(DetailsDir+"/"+c.Symbol+".json", d)
}
