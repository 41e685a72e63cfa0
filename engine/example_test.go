package engine_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/pregao/pregao/engine"
)

// exampleUniverse is a market of one company with two share classes, a
// former ticker and three sessions (2024-01-02 to 2024-01-04), as a
// bundle or the demo generator would give it to Build.
func exampleUniverse() *engine.Universe {
	days := []engine.Date{engine.MakeDate(2024, 1, 2), engine.MakeDate(2024, 1, 3), engine.MakeDate(2024, 1, 4)}
	series := func(ticker string, closes ...engine.Num) engine.Series {
		s := engine.Series{Ticker: ticker, Dates: days[len(days)-len(closes):]}
		for _, c := range closes {
			s.Open, s.High, s.Low, s.Close = append(s.Open, c), append(s.High, c), append(s.Low, c), append(s.Close, c)
			s.Volume, s.Quantity, s.Trades = append(s.Volume, c*1000), append(s.Quantity, 1000), append(s.Trades, 10)
		}
		return s
	}
	const petro = "33000167000101"
	return &engine.Universe{
		Meta: engine.Meta{AsOf: time.Date(2024, 1, 4, 21, 0, 0, 0, time.UTC), Description: "example"},
		Companies: []engine.Company{
			{ID: petro, CVMCode: "9512", Symbol: "PETR", Name: "Petro SA", Kind: engine.KindCompany, Employees: -1, FreeFloat: engine.Null},
		},
		Securities: []engine.Security{
			{Ticker: "PETR4", CompanyID: petro, ISIN: "BRPETRACNPR6", StockType: engine.ClassPS, Currency: "BRL", UnitFactor: engine.Null, LiquidityRank: 1},
			{Ticker: "PETR3", CompanyID: petro, ISIN: "BRPETRACNOR9", StockType: engine.ClassCS, Currency: "BRL", UnitFactor: engine.Null, LiquidityRank: 2},
			{Ticker: "PETX3", CompanyID: petro, ISIN: "BRPETXACNOR1", StockType: engine.ClassCS, Currency: "BRL", UnitFactor: engine.Null, ListedTo: days[0]},
		},
		Renames: []engine.TickerRename{{From: "PETX3", To: "PETR3", Date: days[1]}},
		Daily: []engine.Series{
			series("PETR4", 30, 31, 31.62),
			series("PETR3", 33, 34),
			series("PETX3", 32),
		},
	}
}

// A server builds a Dataset once per snapshot and publishes it in a
// Store; each request reads the current one (one atomic load) and keeps
// it for its whole answer.
func ExampleStore() {
	ds, err := engine.Build(exampleUniverse())
	if err != nil {
		fmt.Println(err)
		return
	}
	var store engine.Store
	store.Publish(ds)

	cur := store.Current() // once per request
	q, err := cur.QuoteAt("PETR4", cur.AsOf())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("PETR4 on %s: close %.2f BRL, %+.2f%% (%+.2f BRL) from %.2f\n",
		q.Date, float64(q.Close), float64(q.Variation)*100, float64(q.VariationValue), float64(q.PrevClose))
	_, err = cur.QuoteAt("XXXX3", cur.AsOf())
	fmt.Println(err, errors.Is(err, engine.ErrNotFound))
	// Output:
	// PETR4 on 2024-01-04: close 31.62 BRL, +2.00% (+0.62 BRL) from 31.00
	// ticker "XXXX3": not found true
}

// Resolve takes any identifier the API accepts: a ticker (a former one
// resolves to the current ticker), a company's root symbol, its
// company_id (punctuation allowed) or CVM code, in any letter case.
func ExampleDataset_Resolve() {
	ds, err := engine.Build(exampleUniverse())
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, id := range []string{"PETR4", "petx3", "PETR", "33.000.167/0001-01", "009512", "VALE3", ""} {
		r, err := ds.Resolve(id)
		switch {
		case errors.Is(err, engine.ErrNotFound):
			fmt.Printf("%-20q not found\n", id)
		case errors.Is(err, engine.ErrInvalid):
			fmt.Printf("%-20q invalid\n", id)
		case r.Kind == engine.ByTicker:
			fmt.Printf("%-20q %s %s of %s (renamed: %t)\n", id, r.Kind, r.Asset.Ticker, r.Company.Name, r.Renamed)
		default:
			fmt.Printf("%-20q %s %s\n", id, r.Kind, r.Company.Name)
		}
	}
	// Output:
	// "PETR4"              ticker PETR4 of Petro SA (renamed: false)
	// "petx3"              ticker PETR3 of Petro SA (renamed: true)
	// "PETR"               symbol Petro SA
	// "33.000.167/0001-01" company_id Petro SA
	// "009512"             company_id Petro SA
	// "VALE3"              not found
	// ""                   invalid
}

// A live session overlays the published Dataset: StartLive opens it,
// each ApplyLive publishes a batch of whole 1-minute bars, and readers
// see the session's running quote through the View. A batch delivered
// again (its Seq not above the last) changes nothing.
func ExampleStore_ApplyLive() {
	ds, err := engine.Build(exampleUniverse())
	if err != nil {
		fmt.Println(err)
		return
	}
	var store engine.Store
	store.Publish(ds)
	session := engine.MakeDate(2024, 1, 5)
	if err := store.StartLive(session); err != nil {
		fmt.Println(err)
		return
	}
	open := session.Time().Add(13 * time.Hour).Unix() // 10:00 in São Paulo
	batch := &engine.LiveBatch{Seq: 1, Session: session, Bars: []engine.LiveBar{
		{Ticker: "PETR4", Time: open, Open: 31.70, High: 31.90, Low: 31.60, Close: 31.80, Volume: 3180, Quantity: 100, Trades: 3},
		{Ticker: "PETR4", Time: open + 60, Open: 31.80, High: 32.10, Low: 31.80, Close: 32.00, Volume: 6400, Quantity: 200, Trades: 5},
	}}
	for range 2 { // the second is a redelivery
		applied, err := store.ApplyLive(batch)
		fmt.Println("applied:", applied, err)
	}

	v := store.View() // once per request
	a, _ := v.Base.Asset("PETR4")
	q := v.QuoteAt(a, open+120) // 10:02, both minutes complete
	fmt.Printf("PETR4 live on %s: close %.2f, high %.2f, %.0f shares, %+.2f%% from %.2f\n",
		q.Date, float64(q.Close), float64(q.High), float64(q.Quantity), float64(q.Variation)*100, float64(q.PrevClose))
	// Output:
	// applied: true <nil>
	// applied: false <nil>
	// PETR4 live on 2024-01-05: close 32.00, high 32.10, 300 shares, +1.20% from 31.62
}
