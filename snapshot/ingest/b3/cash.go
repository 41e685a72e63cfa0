package b3

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/pregao/pregao/engine"
)

// Cash distribution names (engine.CashAction.Name).
const (
	CashDividend     = "DIVIDEND"
	CashInterest     = "INTEREST_ON_EQUITY"
	CashRestitution  = "RESTITUTION"
	CashAmortization = "AMORTIZATION"
	CashRendimento   = "RENDIMENTO"
)

// CashName maps B3's corporate-action label to a cash distribution name,
// or "" when the label is not a cash distribution the model knows.
func CashName(label string) string {
	switch l := strings.Join(strings.Fields(fold(label)), " "); {
	case l == "dividendo" || l == "dividendos":
		return CashDividend
	case strings.HasPrefix(l, "jrs cap proprio") || strings.HasPrefix(l, "juros sobre capital"):
		return CashInterest
	case strings.HasPrefix(l, "rendimento"):
		return CashRendimento
	case strings.HasPrefix(l, "restituicao") || strings.HasPrefix(l, "rest cap"):
		return CashRestitution
	case strings.HasPrefix(l, "amortizacao"):
		return CashAmortization
	}
	return ""
}

// CashContext says whose distributions a GetListedCashDividends response
// lists: the response itself names no company or ticker.
type CashContext struct {
	CompanyID string            // engine company_id
	Symbol    string            // issuer root, "ABEV"
	Tickers   map[string]string // engine class -> ticker ("CS" -> "ABEV3")
	ISINs     map[string]string // engine class -> ISIN (optional)
	Retrieved time.Time         // when the response was downloaded (zero if unknown)
}

// CashStats counts what ReadCashDividends skipped.
type CashStats struct {
	Events       int            // events returned
	UnknownLabel map[string]int // corporateAction labels that are not cash distributions
	NoTicker     map[string]int // typeStock values without a ticker in the context
}

// ReadCashDividends reads a GetListedCashDividends response (results of
// typeStock, dateApproval, valueCash, ratio, corporateAction,
// lastDatePriorEx, quotedPerShares...) into cash actions, one version
// each, in response order. valueCash is BRL per quotedPerShares shares (and
// so divided by it); interest on equity's net value is the declared value
// less the income tax withheld at the rate in force on its prior_ex_date
// (engine.NetCashValue, the table shared with the demo generator), other
// distributions are net. The payment date is not
// in this response (NoDate): see ApplyPaymentDates.
func ReadCashDividends(data []byte, name string, ctx CashContext) ([]engine.CashAction, CashStats, error) {
	st := CashStats{UnknownLabel: map[string]int{}, NoTicker: map[string]int{}}
	var in struct {
		Results []struct {
			TypeStock       string `json:"typeStock"`
			DateApproval    string `json:"dateApproval"`
			ValueCash       string `json:"valueCash"`
			Ratio           string `json:"ratio"`
			CorporateAction string `json:"corporateAction"`
			LastDatePriorEx string `json:"lastDatePriorEx"`
			QuotedPerShares string `json:"quotedPerShares"`
		} `json:"results"`
	}
	if err := json.Unmarshal(data, &in); err != nil {
		return nil, st, fmt.Errorf("%s: %w", name, err)
	}
	var out []engine.CashAction
	ids := map[string]int{}
	var src *engine.Source
	for i, r := range in.Results {
		field := func(f string) string { return fmt.Sprintf("%s: results[%d].%s", name, i, f) }
		cname := CashName(r.CorporateAction)
		if cname == "" {
			st.UnknownLabel[strings.TrimSpace(r.CorporateAction)]++
			continue
		}
		class := ClassOf(r.TypeStock)
		ticker := ctx.Tickers[class]
		if ticker == "" {
			st.NoTicker[strings.TrimSpace(r.TypeStock)]++
			continue
		}
		approval, err := ParseDate(r.DateApproval)
		if err != nil {
			return nil, st, fmt.Errorf("%s: %w", field("dateApproval"), err)
		}
		prior, err := ParseDate(r.LastDatePriorEx)
		if err != nil || !prior.Valid() {
			return nil, st, fmt.Errorf("%s: %v", field("lastDatePriorEx"), orMissing(err))
		}
		v, err := ParseNum(r.ValueCash)
		if err != nil || !v.Valid() || v < 0 {
			return nil, st, fmt.Errorf("%s: %v", field("valueCash"), orMissing(err))
		}
		per := engine.Num(1)
		if strings.TrimSpace(r.QuotedPerShares) != "" {
			per, err = ParseNum(r.QuotedPerShares)
			if err != nil || !per.Valid() || per <= 0 {
				return nil, st, fmt.Errorf("%s: %v", field("quotedPerShares"), orMissing(err))
			}
		}
		v /= per
		net := engine.NetCashValue(cname, v, prior)
		code := codeOf(cname)
		eid := fmt.Sprintf("B3-%s-%s-%s-%s-%s", ctx.Symbol, class, code, dateKey(approval), dateKey(prior))
		ids[eid]++
		if n := ids[eid]; n > 1 {
			eid += "-" + strconv.Itoa(n)
		}
		ca, err := engine.CashActionOf(engine.CashWords{StockType: class, Name: cname, Code: code, Currency: "BRL"})
		if err != nil {
			return nil, st, fmt.Errorf("%s: %w", field("typeStock"), err)
		}
		ca.ID, ca.EventID, ca.Version = eid+"-V1", eid, 1
		ca.CompanyID, ca.Ticker, ca.ISIN = engine.Intern(ctx.CompanyID), engine.Intern(ticker), engine.Intern(ctx.ISINs[class])
		ca.ApprovalDate, ca.PriorExDate, ca.PaymentDate = approval, prior, engine.NoDate
		ca.DeclaredValue, ca.MonetaryCorrection, ca.NetValue = v, 0, net
		ca.CorrectionStart, ca.CorrectionEnd = engine.NoDate, engine.NoDate
		if src == nil { // one source the file's actions share
			src = &engine.Source{
				Name:             "B3 listed companies: cash dividends",
				VisualizationURL: engine.URLOf("https://sistemaswebb3-listados.b3.com.br/listedCompaniesPage/?language=pt-br"),
				RetrievedAt:      ctx.Retrieved,
			}
		}
		ca.Source = src
		out = append(out, ca)
	}
	st.Events = len(out)
	return out, st, nil
}

func orMissing(err error) error {
	if err != nil {
		return err
	}
	return fmt.Errorf("missing or out of range")
}

func dateKey(d engine.Date) string {
	if !d.Valid() {
		return "NA"
	}
	return strings.ReplaceAll(d.String(), "-", "")
}

func codeOf(name string) string {
	switch name {
	case CashDividend:
		return "DIV"
	case CashInterest:
		return "JCP"
	case CashRestitution:
		return "RES"
	case CashAmortization:
		return "AMT"
	case CashRendimento:
		return "REN"
	}
	return name
}
