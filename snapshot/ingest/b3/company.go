package b3

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/pregao/pregao/engine"
)

// SupplementCash is one cash distribution of a GetListedSupplementCompany
// response (with its payment date, which GetListedCashDividends lacks).
type SupplementCash struct {
	ISIN        string
	Name        string // CashName of the label ("" when unknown)
	Label       string // as written ("JRS CAP PROPRIO")
	Rate        engine.Num
	Approval    engine.Date
	PriorEx     engine.Date
	PaymentDate engine.Date
	RelatedTo   string
}

// Supplement is a GetListedSupplementCompany response.
type Supplement struct {
	Symbol      string // "ABEV"
	CVMCode     string
	TradingName string
	Common      int64 // numberCommonShares; -1 when absent
	Preferred   int64 // numberPreferredShares; -1 when absent
	Cash        []SupplementCash
	// ShareActions come from stockDividends and subscriptions, in file
	// order; CompanyID and the tickers (root and legs) are left to the
	// caller, who knows the quotes' ISINs.
	ShareActions []engine.ShareAction
	// UnknownLabels counts the stockDividends records skipped because
	// their label maps to no share-action type, by label as written.
	UnknownLabels map[string]int
}

// ReadSupplement reads a GetListedSupplementCompany response (a one-element
// array). stockDividends become share actions as stockActions describes
// (splits, bonuses, reverse splits, spin-offs, mergers, redemptions and
// capital restitutions with their legs; unknown labels are counted in
// UnknownLabels). subscriptions become SUBSCRIPTION actions: the right to
// subscribe p% more shares (factor 1+p/100, the holding once exercised;
// adjusted prices ignore it, as the shares are paid for), the unit price,
// rights trading period and subscription date in remarks.
func ReadSupplement(data []byte, name string) (*Supplement, error) {
	type cashIn struct {
		AssetIssued   string `json:"assetIssued"`
		PaymentDate   string `json:"paymentDate"`
		Rate          string `json:"rate"`
		RelatedTo     string `json:"relatedTo"`
		ApprovedOn    string `json:"approvedOn"`
		ISINCode      string `json:"isinCode"`
		Label         string `json:"label"`
		LastDatePrior string `json:"lastDatePrior"`
	}
	type subscriptionIn struct {
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
	var in []struct {
		TradingName           string           `json:"tradingName"`
		NumberCommonShares    string           `json:"numberCommonShares"`
		NumberPreferredShares string           `json:"numberPreferredShares"`
		Code                  string           `json:"code"`
		CodeCVM               string           `json:"codeCVM"`
		CashDividends         []cashIn         `json:"cashDividends"`
		StockDividends        []stockIn        `json:"stockDividends"`
		Subscriptions         []subscriptionIn `json:"subscriptions"`
	}
	if err := json.Unmarshal(data, &in); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(in) != 1 {
		return nil, fmt.Errorf("%s: want one company, got %d", name, len(in))
	}
	c := in[0]
	s := &Supplement{Symbol: strings.TrimSpace(c.Code), CVMCode: strings.TrimSpace(c.CodeCVM), TradingName: strings.TrimSpace(c.TradingName), Common: -1, Preferred: -1}
	count := func(f, v string) (int64, error) {
		if strings.TrimSpace(v) == "" {
			return -1, nil
		}
		n, err := ParseNum(v)
		if err != nil || n < 0 || n != engine.Num(int64(n)) {
			return 0, fmt.Errorf("%s: %s: bad share count %q", name, f, v)
		}
		return int64(n), nil
	}
	var err error
	if s.Common, err = count("numberCommonShares", c.NumberCommonShares); err != nil {
		return nil, err
	}
	if s.Preferred, err = count("numberPreferredShares", c.NumberPreferredShares); err != nil {
		return nil, err
	}
	for i, x := range c.CashDividends {
		f := func(n string) string { return fmt.Sprintf("%s: cashDividends[%d].%s", name, i, n) }
		sc := SupplementCash{ISIN: strings.TrimSpace(x.ISINCode), Label: strings.TrimSpace(x.Label), Name: CashName(x.Label), RelatedTo: x.RelatedTo}
		if sc.Rate, err = ParseNum(x.Rate); err != nil {
			return nil, fmt.Errorf("%s: %w", f("rate"), err)
		}
		if sc.Approval, err = ParseDate(x.ApprovedOn); err != nil {
			return nil, fmt.Errorf("%s: %w", f("approvedOn"), err)
		}
		if sc.PriorEx, err = ParseDate(x.LastDatePrior); err != nil {
			return nil, fmt.Errorf("%s: %w", f("lastDatePrior"), err)
		}
		if sc.PaymentDate, err = ParseDate(x.PaymentDate); err != nil {
			return nil, fmt.Errorf("%s: %w", f("paymentDate"), err)
		}
		s.Cash = append(s.Cash, sc)
	}
	if s.ShareActions, s.UnknownLabels, err = stockActions(c.StockDividends, name); err != nil {
		return nil, err
	}
	for i, x := range c.Subscriptions {
		f := func(n string) string { return fmt.Sprintf("%s: subscriptions[%d].%s", name, i, n) }
		pct, err := ParseNum(x.Percentage)
		if err != nil || !pct.Valid() || pct <= 0 {
			return nil, fmt.Errorf("%s: %v", f("percentage"), orMissing(err))
		}
		approval, err := ParseDate(x.ApprovedOn)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f("approvedOn"), err)
		}
		prior, err := ParseDate(x.LastDatePrior)
		if err != nil || !prior.Valid() {
			return nil, fmt.Errorf("%s: %v", f("lastDatePrior"), orMissing(err))
		}
		// The terms the API has no field for go to remarks, in B3's words.
		var terms []string
		if p := strings.TrimSpace(x.PriceUnit); p != "" {
			terms = append(terms, "preço unitário R$ "+p)
		}
		if p := strings.TrimSpace(x.TradingPeriod); p != "" {
			terms = append(terms, "negociação dos direitos "+p)
		}
		if d := strings.TrimSpace(x.SubscriptionDate); d != "" {
			terms = append(terms, "subscrição em "+d)
		}
		if r := strings.TrimSpace(x.Remarks); r != "" {
			terms = append(terms, r)
		}
		s.ShareActions = append(s.ShareActions, engine.ShareAction{
			ISIN: strings.TrimSpace(x.ISINCode), IssuedISIN: strings.TrimSpace(x.AssetIssued),
			ApprovalDate: approval, PriorExDate: prior, Type: engine.ActSubscription, Label: strings.TrimSpace(x.Label),
			Factor: 1 + percentFraction(pct), Remarks: strings.Join(terms, "; "),
		})
	}
	return s, nil
}

// ApplyPaymentDates fills the payment date of the cash actions that match
// a supplement distribution (same ISIN, name, approval and prior-ex dates
// and value within 1e-9 BRL), and returns how many it filled.
func ApplyPaymentDates(cas []engine.CashAction, s *Supplement) int {
	n := 0
	for i := range cas {
		ca := &cas[i]
		if ca.PaymentDate.Valid() {
			continue
		}
		for _, x := range s.Cash {
			if x.Name == ca.Name.String() && x.Approval == ca.ApprovalDate && x.PriorEx == ca.PriorExDate &&
				(ca.ISIN.String() == "" || x.ISIN == ca.ISIN.String()) && x.Rate.Valid() && abs(float64(x.Rate-ca.DeclaredValue)) < 1e-9 {
				ca.PaymentDate = x.PaymentDate
				n++
				break
			}
		}
	}
	return n
}

func abs(f float64) float64 {
	if f < 0 {
		return -f
	}
	return f
}

// Details is a GetDetailsCompany response.
type Details struct {
	Symbol      string // issuingCompany, "ABEV"
	Name        string // companyName
	TradingName string
	CNPJ        string // 14 digits
	CVMCode     string
	Industry    []string // industryClassification split on " / " (sector, subsector, segment)
	Website     string
	Status      string            // ACTIVE for status "A", else "" (unknown)
	Tickers     map[string]string // ticker -> ISIN (otherCodes)
}

// ReadDetails reads a GetDetailsCompany response.
func ReadDetails(data []byte, name string) (*Details, error) {
	var in struct {
		IssuingCompany         string `json:"issuingCompany"`
		CompanyName            string `json:"companyName"`
		TradingName            string `json:"tradingName"`
		CNPJ                   string `json:"cnpj"`
		IndustryClassification string `json:"industryClassification"`
		Website                string `json:"website"`
		Status                 string `json:"status"`
		CodeCVM                string `json:"codeCVM"`
		OtherCodes             []struct {
			Code string `json:"code"`
			ISIN string `json:"isin"`
		} `json:"otherCodes"`
	}
	if err := json.Unmarshal(data, &in); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	d := &Details{Symbol: strings.TrimSpace(in.IssuingCompany), Name: strings.TrimSpace(in.CompanyName), TradingName: strings.TrimSpace(in.TradingName),
		CVMCode: strings.TrimSpace(in.CodeCVM), Website: strings.TrimSpace(in.Website), Tickers: map[string]string{}}
	if strings.TrimSpace(in.Status) == "A" {
		d.Status = "ACTIVE"
	}
	for _, c := range in.CNPJ {
		if c >= '0' && c <= '9' {
			d.CNPJ += string(c)
		}
	}
	if d.CNPJ != "" && len(d.CNPJ) != 14 {
		return nil, fmt.Errorf("%s: cnpj: want 14 digits, got %q", name, in.CNPJ)
	}
	for _, p := range strings.Split(in.IndustryClassification, "/") {
		if p = strings.TrimSpace(p); p != "" {
			d.Industry = append(d.Industry, p)
		}
	}
	for i, oc := range in.OtherCodes {
		t := strings.TrimSpace(oc.Code)
		if !engine.ValidTicker(t) {
			return nil, fmt.Errorf("%s: otherCodes[%d].code: bad ticker %q", name, i, oc.Code)
		}
		d.Tickers[t] = strings.TrimSpace(oc.ISIN)
	}
	return d, nil
}
