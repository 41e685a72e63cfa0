package engine

import (
	"encoding/json"
	"time"
)

// cashActionJSON is a CashAction as JSON spells it (the bundle's
// object): the words and times as before CashAction held Labels, a
// Stamp and pointers, in the same order.
type cashActionJSON struct {
	ID                 string        `json:"id"`
	EventID            string        `json:"event_id"`
	Version            int           `json:"version"`
	CompanyID          string        `json:"company_id"`
	Ticker             string        `json:"ticker"`
	StockType          string        `json:"stock_type"`
	ISIN               string        `json:"isin"`
	ApprovalDate       Date          `json:"approval_date"`
	PriorExDate        Date          `json:"prior_ex_date"`
	PublishDate        time.Time     `json:"publish_date"`
	PaymentDate        Date          `json:"payment_date"`
	Protocol           string        `json:"protocol"`
	Name               string        `json:"name"`
	Code               string        `json:"code"`
	DeclaredValue      Num           `json:"declared_value"`
	MonetaryCorrection Num           `json:"monetary_correction"`
	CorrectionStart    Date          `json:"monetary_correction_start_date"`
	CorrectionEnd      Date          `json:"monetary_correction_end_date"`
	NetValue           Num           `json:"net_value"`
	Currency           string        `json:"currency"`
	Installments       []Installment `json:"installments"`
	Source             Source        `json:"source"`
}

// MarshalJSON encodes c as the bundle's cash action object.
func (c CashAction) MarshalJSON() ([]byte, error) {
	v := cashActionJSON{c.ID, c.EventID, c.Version, c.CompanyID.String(), c.Ticker.String(), c.StockType.String(), c.ISIN.String(),
		c.ApprovalDate, c.PriorExDate, c.PublishDate.Time(), c.PaymentDate, c.Protocol, c.Name.String(), c.Code.String(),
		c.DeclaredValue, c.MonetaryCorrection, c.CorrectionStart, c.CorrectionEnd, c.NetValue, c.Currency.String(),
		c.Installments.All(), *c.SourceOrZero()}
	return json.Marshal(v)
}

// UnmarshalJSON decodes the bundle's cash action object; more distinct
// words than Labels hold is an error.
func (c *CashAction) UnmarshalJSON(b []byte) error {
	var v cashActionJSON
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	out, err := CashActionOf(CashWords{StockType: v.StockType, Name: v.Name, Code: v.Code, Currency: v.Currency})
	if err != nil {
		return err
	}
	out.ID, out.EventID, out.Version, out.CompanyID, out.Ticker, out.ISIN = v.ID, v.EventID, v.Version, Intern(v.CompanyID), Intern(v.Ticker), Intern(v.ISIN)
	out.ApprovalDate, out.PriorExDate, out.PublishDate, out.PaymentDate = v.ApprovalDate, v.PriorExDate, StampOf(v.PublishDate), v.PaymentDate
	out.Protocol, out.DeclaredValue, out.MonetaryCorrection = v.Protocol, v.DeclaredValue, v.MonetaryCorrection
	out.CorrectionStart, out.CorrectionEnd, out.NetValue = v.CorrectionStart, v.CorrectionEnd, v.NetValue
	out.Installments, out.Source = InstallmentsOf(v.Installments), &v.Source
	*c = out
	return nil
}

// CashWords are a cash action's words as spelled.
type CashWords struct{ StockType, Name, Code, Currency string }

// CashActionOf returns a CashAction holding the words w as Labels; an
// error when the process already holds 256 words and w brings more.
func CashActionOf(w CashWords) (CashAction, error) {
	var c CashAction
	for _, f := range [...]struct {
		l *Label
		s string
	}{{&c.StockType, w.StockType}, {&c.Name, w.Name}, {&c.Code, w.Code}, {&c.Currency, w.Currency}} {
		l, ok := LabelOf(f.s)
		if !ok {
			return CashAction{}, errTooManyLabels
		}
		*f.l = l
	}
	return c, nil
}
