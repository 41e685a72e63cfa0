package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/httpapi"
	"github.com/pregao/pregao/snapshot"
	"github.com/pregao/pregao/snapshot/ingest/datafile"
)

// Every operation answers on the snapshot built from the real sample
// files (what make run-real serves): 200 with JSON for a traded company
// (AMBEV), its tickers, a listed fund with reports, the IBOV portfolio
// (with the reductor of its file's footer), and the BDRs, index members
// and share events the samples carry are there.
func TestRealSnapshotEndpoints(t *testing.T) {
	if testing.Short() {
		t.Skip("imports the real samples")
	}
	dir, err := datafile.RealDir()
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	var so, se bytes.Buffer
	if err := runImport(context.Background(), []string{"--out", filepath.Join(work, "bundle"), "--real-testdata", dir}, &so, &se); err != nil {
		t.Fatalf("import: %v\n%s", err, se.String())
	}
	snap := filepath.Join(work, "real.snap")
	if err := runBuild(context.Background(), []string{"--from", filepath.Join(work, "bundle"), "--out", snap}, &so, &se); err != nil {
		t.Fatalf("build: %v", err)
	}
	ds, _, err := snapshot.Load(snap, snapshot.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fund := ""
	bdrs, members := 0, 0
	for _, a := range ds.Assets() {
		if a.Issuer == nil {
			continue
		}
		if fund == "" && a.StockType == engine.ClassFundUnit && len(a.Issuer.FundRatios) > 0 && a.Latest.Valid() {
			fund = a.Ticker
		}
		if a.StockType == engine.ClassBDR {
			bdrs++
		}
	}
	if ix, ok := ds.Index("IBOV"); ok {
		members = len(ix.Index.Members)
	}
	if fund == "" || bdrs == 0 || members == 0 {
		t.Fatalf("real snapshot: fund %q, %d BDR tickers, %d IBOV members", fund, bdrs, members)
	}
	api, key := apiWithKey(t, ds)
	for _, rt := range httpapi.Routes() {
		if rt.Root {
			continue
		}
		path := "/v2" + rt.Path
		path = strings.ReplaceAll(path, ":symbol", "IBOV")
		path = strings.ReplaceAll(path, ":ticker", "ABEV3")
		if strings.HasPrefix(rt.Path, "/traded-funds/") {
			path = strings.ReplaceAll(path, ":id", fund)
		} else {
			path = strings.ReplaceAll(path, ":id", "ABEV")
		}
		body := ""
		switch rt.Path {
		case "/quotes":
			body = `{"tickers":["ABEV3","PETR4","` + fund + `"],"type":"current"}`
		case "/screener":
			body = `{}`
		}
		r := httptest.NewRequest(rt.Method, path, strings.NewReader(body))
		r.Header.Set("Authorization", "Bearer "+key)
		w := httptest.NewRecorder()
		api.ServeHTTP(w, r)
		if w.Code != http.StatusOK || !json.Valid(w.Body.Bytes()) {
			t.Errorf("%s %s: %d %.200s", rt.Method, path, w.Code, w.Body)
		}
	}
	// IBOV is the portfolio of 2021-03-26 (the latest on or before the
	// quotes' last session), whose footer reads "Redutor;;;18.296.80337677573";
	// SMLL's file lost its footer: no reductor.
	for sym, want := range map[string]string{"IBOV": `"reductor":18296803.37677573,`, "SMLL": `"reductor":null,`} {
		r := httptest.NewRequest("GET", "/v2/indexes/"+sym, nil)
		r.Header.Set("Authorization", "Bearer "+key)
		w := httptest.NewRecorder()
		api.ServeHTTP(w, r)
		if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), want) {
			t.Errorf("%s portfolio: %d %.300s, want %s", sym, w.Code, w.Body, want)
		}
	}
	// The share event of the samples (AMBEV's 2014 subscription) is served.
	r := httptest.NewRequest("GET", "/v2/companies/ABEV3/corporate-actions", nil)
	r.Header.Set("Authorization", "Bearer "+key)
	w := httptest.NewRecorder()
	api.ServeHTTP(w, r)
	if !strings.Contains(w.Body.String(), `"type":"SUBSCRIPTION"`) {
		t.Errorf("AMBEV's share events: %s", w.Body)
	}
	t.Logf("real snapshot: fund %s, %d BDR tickers, %d IBOV members", fund, bdrs, members)
}
