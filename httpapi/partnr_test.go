package httpapi

import (
	"encoding/json"
	"testing"
)

// The insider-transaction parameters Partnr's users send: month (a
// reference month), trade (BUY, SELL) and group_id filter reports and
// movements; shares history takes a date range.
func TestPartnrParams(t *testing.T) {
	ts := newTestServer(t, true)
	type report struct {
		ReferenceDate string `json:"reference_date"`
		Movements     []struct{ Group, Operation string }
	}
	get := func(path string) []report {
		t.Helper()
		w := ts.do("GET", path, testKeyDelayed, "")
		if w.Code != 200 {
			t.Fatalf("%s: %d %s", path, w.Code, w.Body)
		}
		validateAnswer(t, "GET", path, "", w)
		var rs []report
		json.Unmarshal(w.Body.Bytes(), &rs)
		return rs
	}
	all := get("/v2/companies/ENHZ/insider-transactions")
	if len(all) == 0 {
		t.Fatal("no insider report in the fixture")
	}
	month := all[0].ReferenceDate[:7]
	for _, r := range get("/v2/companies/ENHZ/insider-transactions?month=" + month) {
		if r.ReferenceDate[:7] != month {
			t.Errorf("month=%s: a report of %s", month, r.ReferenceDate)
		}
	}
	if n := len(get("/v2/companies/ENHZ/insider-transactions?month=" + month)); n == 0 {
		t.Errorf("month=%s: no report", month)
	}
	if n := len(get("/v2/companies/ENHZ/insider-transactions?month=1999-01")); n != 0 {
		t.Errorf("month=1999-01: %d reports", n)
	}
	buys, sells := 0, 0
	for _, r := range get("/v2/companies/ENHZ/insider-transactions?trade=buy") {
		if len(r.Movements) == 0 {
			t.Error("trade=buy: a report without movements")
		}
		for _, m := range r.Movements {
			if m.Operation != "BUY" {
				t.Errorf("trade=buy: a %s movement", m.Operation)
			}
			buys++
		}
	}
	for _, r := range all {
		for _, m := range r.Movements {
			if m.Operation == "SELL" {
				sells++
			}
		}
	}
	if buys == 0 || sells == 0 {
		t.Errorf("fixture: %d buys, %d sells", buys, sells)
	}
	group := all[0].Movements[0].Group
	for _, r := range get("/v2/companies/ENHZ/insider-transactions?group_id=" + group) {
		for _, m := range r.Movements {
			if m.Group != group {
				t.Errorf("group_id=%s: a %s movement", group, m.Group)
			}
		}
	}
	checkError(t, ts.do("GET", "/v2/companies/ENHZ/insider-transactions?month=2024-13", testKeyDelayed, ""), 400, "month")
	checkError(t, ts.do("GET", "/v2/companies/ENHZ/insider-transactions?trade=HOLD", testKeyDelayed, ""), 400, "trade")

	var shares []struct{ Date string }
	w := ts.do("GET", "/v2/companies/ENHZ/shares-history", testKeyDelayed, "")
	json.Unmarshal(w.Body.Bytes(), &shares)
	if len(shares) == 0 {
		t.Fatal("no share count in the fixture")
	}
	d := shares[0].Date
	var one []struct{ Date string }
	json.Unmarshal(ts.do("GET", "/v2/companies/ENHZ/shares-history?start_date="+d[:10]+"&end_date="+d[:10], testKeyDelayed, "").Body.Bytes(), &one)
	if len(one) != 1 || one[0].Date != d {
		t.Errorf("shares on %s: %v", d, one)
	}
	var none []struct{ Date string }
	json.Unmarshal(ts.do("GET", "/v2/companies/ENHZ/shares-history?end_date=1999-12-31", testKeyDelayed, "").Body.Bytes(), &none)
	if len(none) != 0 {
		t.Errorf("shares before 2000: %v", none)
	}
	checkError(t, ts.do("GET", "/v2/companies/ENHZ/shares-history?start_date=2024-02-01&end_date=2024-01-01", testKeyDelayed, ""), 400, "after end_date")
}
