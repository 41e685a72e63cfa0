package main

import (
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/engine/ratios"
	"github.com/pregao/pregao/httpapi"
	"github.com/pregao/pregao/snapshot"
	"github.com/pregao/pregao/snapshot/ingest/demo"
)

// The same demo market loaded from format 5 (ratio points decoded into
// the heap) and from format 6 (ratio points used where they lie in the
// file) answers every ratio route with the same bytes: each company's
// and ticker's ratios, valuation and calculation, now and as of past
// moments, funds' ratios, the catalog and the screener.
func TestRatioColumnsAnswerAsFormat5(t *testing.T) {
	// Symbols of the process numbered apart from the file's own table,
	// so that a point's symbol index read as a Sym would name another.
	for _, s := range []string{"OTHER-1", "OTHER-2", "OTHER-3"} {
		engine.Intern(s + t.Name())
	}
	u := demo.GenerateSize(7, demo.Size{Companies: 6, FIIs: 2, ETFs: 1, SponsoredBDRs: 1, HistoryFrom: 2022, IntradayTickers: 1, IntradaySessions: 1})
	d, err := ratios.Derive(u)
	if err != nil {
		t.Fatal(err)
	}
	u.Derived = d
	if len(d.Ratios) == 0 || len(d.RatioVars) == 0 {
		t.Fatal("the demo has no ratio points")
	}
	dir := t.TempDir()
	serve := func(version uint16) (*httpapi.API, string, *engine.Dataset) {
		path := filepath.Join(dir, "v"+string(rune('0'+version))+".snap")
		if err := snapshot.WriteFile(path, u, snapshot.WriteOptions{Version: version}); err != nil {
			t.Fatal(err)
		}
		ds, h, err := snapshot.Load(path, snapshot.LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if h.FormatVersion != version {
			t.Fatalf("format %d loaded as %d", version, h.FormatVersion)
		}
		store := &engine.Store{}
		keys, key := delayedKey(t, ds)
		api := httpapi.New(httpapi.DefaultConfig(), store, keys, httpapi.SnapshotClock{Store: store}, prometheus.NewRegistry(), nil)
		api.Prepare(ds, h.ID, h.BuildTime)
		store.Publish(ds)
		return api, key, ds
	}
	api5, key5, ds5 := serve(5)
	api6, key6, ds6 := serve(6)
	if ds6.Universe().Derived.RatioSyms == nil {
		t.Error("format 6's ratio points were decoded, not used in place")
	}
	// Every point names the same company and ticker either way.
	p5, p6 := ds5.Universe().Derived.Ratios, ds6.Universe().Derived.Ratios
	if len(p5) != len(p6) {
		t.Fatalf("%d points from format 5, %d from format 6", len(p5), len(p6))
	}
	for i := range p5 {
		if ds5.RatioCompany(&p5[i]) != ds6.RatioCompany(&p6[i]) || ds5.RatioTicker(&p5[i]) != ds6.RatioTicker(&p6[i]) {
			t.Fatalf("point %d: %s/%s from format 5, %s/%s from format 6", i, ds5.RatioCompany(&p5[i]), ds5.RatioTicker(&p5[i]), ds6.RatioCompany(&p6[i]), ds6.RatioTicker(&p6[i]))
		}
	}
	do := func(api *httpapi.API, key, method, path, body string) (int, string) {
		r := httptest.NewRequest(method, path, strings.NewReader(body))
		r.Header.Set("Authorization", "Bearer "+key)
		if body != "" {
			r.Header.Set("Content-Type", "application/json")
		}
		w := httptest.NewRecorder()
		api.ServeHTTP(w, r)
		return w.Code, w.Body.String()
	}

	var gets []string
	asOfs := []string{"", "2023-05-15T12:00:00", "2024-03-28T18:00:00", "2025-08-01T10:30:00"}
	for _, is := range ds5.Issuers() {
		ids := []string{is.ID}
		for _, a := range is.Assets {
			ids = append(ids, a.Ticker)
		}
		for _, id := range ids {
			if is.IsFund() {
				gets = append(gets, "/v2/traded-funds/"+id+"/ratios", "/v2/traded-funds/"+id+"/ratios?format=csv")
				continue
			}
			gets = append(gets, "/v2/companies/"+id)
			for _, at := range asOfs {
				q := ""
				if at != "" {
					q = "&as_of=" + url.QueryEscape(at)
				}
				gets = append(gets,
					"/v2/companies/"+id+"/ratios?show_calculation=true"+q,
					"/v2/companies/"+id+"/ratios?frequency=TTM"+q,
					"/v2/companies/"+id+"/ratios/valuation?show_calculation=true"+q,
					"/v2/companies/"+id+"/ratios/valuation?format=csv"+q)
			}
		}
	}
	gets = append(gets, "/v2/ratios/catalog")
	ok := 0
	for _, p := range gets {
		c5, b5 := do(api5, key5, "GET", p, "")
		c6, b6 := do(api6, key6, "GET", p, "")
		if c5 != c6 || b5 != b6 {
			t.Errorf("GET %s: format 5 answers %d (%d bytes), format 6 %d (%d bytes)\n5: %.300s\n6: %.300s", p, c5, len(b5), c6, len(b6), b5, b6)
		}
		if c5 == 200 && strings.Contains(p, "/ratios") && strings.Contains(b5, `"value"`) {
			ok++
		}
	}
	if ok < len(gets)/4 {
		t.Errorf("only %d of %d ratio answers hold a value: the comparison proves little", ok, len(gets))
	}
	bodies := []string{
		`{"primaryOnly":false,"limit":500}`,
		`{"primaryOnly":false,"sort":[{"by":"droplet:PRICE_TO_EARNINGS","order":"asc"}],"limit":500}`,
		`{"primaryOnly":false,"filters":[{"type":"droplet","id":"PRICE_TO_EARNINGS","op":">","value":0}],"sort":[{"by":"droplet:PRICE_TO_EARNINGS","order":"desc"}]}`,
		`{"sort":[{"by":"droplet:DIVIDEND_YIELD","order":"desc"},{"by":"close_price"}],"filters":[{"type":"droplet","id":"DIVIDEND_YIELD","op":">=","value":0}],"limit":100}`,
		`{"primaryOnly":false,"sort":[{"by":"droplet:EV_TO_EBITDA","order":"asc"}],"as_of":"2024-03-28T18:00:00","limit":500}`,
		`{"primaryOnly":false,"sort":[{"by":"droplet:DIVIDEND_YIELD","order":"desc"}],"as_of":"2025-08-01T10:30:00","limit":500}`,
	}
	for _, b := range bodies {
		c5, b5 := do(api5, key5, "POST", "/v2/screener", b)
		c6, b6 := do(api6, key6, "POST", "/v2/screener", b)
		if c5 != c6 || b5 != b6 {
			t.Errorf("POST /v2/screener %s: format 5 answers %d (%d bytes), format 6 %d (%d bytes)\n5: %.300s\n6: %.300s", b, c5, len(b5), c6, len(b6), b5, b6)
		}
		if c5 != 200 {
			t.Errorf("POST /v2/screener %s: %d %.200s", b, c5, b5)
		}
	}
	t.Logf("%d GETs (%d with ratio values) and %d screener bodies compared", len(gets), ok, len(bodies))
}
