package httpapi

import (
	"encoding/json"
	"strings"
	"testing"
)

// GET /traded-funds lists the listed funds, filtered and paged, each
// answer valid against its schema; GET /traded-funds/{fundIdentifier} is one fund's
// detail; /companies?search= finds funds too.
func TestTradedFunds(t *testing.T) {
	ts := newTestServer(t, true)
	type item struct {
		CompanyID string `json:"company_id"`
		Kind      string
		Tickers   []struct{ Ticker string }
	}
	list := func(target string) []item {
		t.Helper()
		w := ts.do("GET", target, testKeyDelayed, "")
		if w.Code != 200 {
			t.Fatalf("GET %s: %d %s", target, w.Code, w.Body)
		}
		validateAnswer(t, "GET", target, "", w)
		var out []item
		if err := json.Unmarshal(w.Body.Bytes(), &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	all := list("/v2/traded-funds")
	if len(all) == 0 {
		t.Fatal("no fund listed")
	}
	kinds := map[string]int{}
	for _, f := range all {
		kinds[f.Kind]++
		if f.Kind != "FII" && f.Kind != "ETF" {
			t.Errorf("%s: kind %q", f.CompanyID, f.Kind)
		}
	}
	if fii := list("/v2/traded-funds?kind=fii"); len(fii) != kinds["FII"] {
		t.Errorf("kind=fii: %d funds, %d FIIs in the list", len(fii), kinds["FII"])
	}
	if got := list("/v2/traded-funds?search=GSUL"); len(got) == 0 || got[0].Tickers[0].Ticker != "GSUL11" {
		t.Errorf("search=GSUL: %+v", got)
	}
	if got := list("/v2/companies?search=GSUL11"); len(got) == 0 || got[0].Kind != "FII" && got[0].Kind != "ETF" {
		t.Errorf("/companies?search=GSUL11: %+v", got)
	}
	var withSector []struct{ Sector *struct{ ID string } }
	json.Unmarshal(ts.do("GET", "/v2/traded-funds?show_sector=true", testKeyDelayed, "").Body.Bytes(), &withSector)
	if len(withSector) == 0 || withSector[0].Sector == nil {
		t.Fatalf("show_sector: %+v", withSector)
	}
	id := withSector[0].Sector.ID
	if got := list("/v2/traded-funds?sector=" + strings.ToLower(id)); len(got) == 0 || len(got) > len(all) {
		t.Errorf("sector=%s: %d of %d", id, len(got), len(all))
	}
	checkError(t, ts.do("GET", "/v2/traded-funds?sector=NOPE", testKeyDelayed, ""), 400, `unknown sector id "NOPE"`)
	checkError(t, ts.do("GET", "/v2/traded-funds?kind=BDR", testKeyDelayed, ""), 400, "kind")

	w := ts.do("GET", "/v2/traded-funds/gsul11", testKeyDelayed, "")
	if w.Code != 200 || !strings.Contains(w.Body.String(), `"indicators":[{"id":`) {
		t.Fatalf("GET /traded-funds/gsul11: %d %s", w.Code, w.Body)
	}
	validateAnswer(t, "GET", "/v2/traded-funds/gsul11", "", w)
	checkError(t, ts.do("GET", "/v2/traded-funds/ENHZ3", testKeyDelayed, ""), 404, "not found")
}
