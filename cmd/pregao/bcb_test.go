package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot"
	"github.com/pregao/pregao/snapshot/ingest/bcb"
	"github.com/pregao/pregao/snapshot/ingest/fetch"
	"github.com/pregao/pregao/snapshot/ingest/fetch/fetchtest"
)

// bcbServer serves the samples: the SGS series 432 and 433 as the Banco
// Central answered them, the PTAX closing-rates file of 2026-07-31.
func bcbServer(t *testing.T) (*fetchtest.Server, string) {
	t.Helper()
	s, err := fetchtest.Samples()
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return s, ts.URL
}

// pregao fetch --sources bcb: the closing-rates file of each weekday (a
// day without a bulletin counted absent) and each SGS series in windows
// of at most 10 years (the stand-in refuses longer ones for the daily
// 432); a second run downloads nothing and asks the SGS nothing.
func TestFetchCommandBCB(t *testing.T) {
	s, base := bcbServer(t)
	out := t.TempDir()
	args := []string{"--sources", "bcb", "--from", "2026-07-30", "--to", "2026-08-03", "--dir", out, "--base-url", base}
	var so, se bytes.Buffer
	if err := runFetch(context.Background(), args, &so, &se); err != nil {
		t.Fatalf("%v\n%s", err, so.String())
	}
	for _, want := range []string{"fetch: 1 downloaded, 0 already complete, 2 absent", "fetch: BCB SGS series: 2 answers stored", "1 windows without values, 3 requests"} {
		if !strings.Contains(so.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, so.String())
		}
	}
	for _, f := range []string{"Download/fechamento/20260731.csv", "dados/serie/bcdata.sgs.432/dados/2020-2029.json", "dados/serie/bcdata.sgs.433/dados/2020-2029.json"} {
		if _, err := os.Stat(filepath.Join(out, filepath.FromSlash(f))); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	before := s.Total()
	so.Reset()
	if err := runFetch(context.Background(), args, &so, &se); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(so.String(), "fetch: 0 downloaded, 1 already complete, 2 absent") || !strings.Contains(so.String(), "0 answers stored (0.0 MB), 3 already fetched today or final, 0 windows without values, 0 requests") {
		t.Errorf("second run:\n%s", so.String())
	}
	if n := s.Total() - before; n != 2 { // the two days without a file, asked again
		t.Errorf("second run: %d requests", n)
	}
}

// The series the fetch asks are those the importer maps, and back.
func TestSGSCodesMapped(t *testing.T) {
	if len(fetch.SGSCodes) != len(bcb.Mapping) {
		t.Fatalf("fetch asks %v, bcb maps %d series", fetch.SGSCodes, len(bcb.Mapping))
	}
	for i, m := range bcb.Mapping {
		if fetch.SGSCodes[i] != m.Code {
			t.Errorf("fetch asks %d where bcb maps %s to %d", fetch.SGSCodes[i], m.Ticker, m.Code)
		}
	}
}

// pregao update wires the bcb source: it fetches the SGS series and the
// closing rates with the day's COTAHIST, imports them from the folders
// fetch wrote (officialInputs) and builds a snapshot whose macro series
// are those of the as-of day: the Selic target of 2022-02-04 (10.75, the
// Copom's rise of 2022-02-02 in force from the 3rd), the IPCA up to
// December 2021 (0.73; January's was released on 2022-02-09).
func TestUpdateBCB(t *testing.T) {
	_, base := bcbServer(t)
	work := t.TempDir()
	out := filepath.Join(work, "pregao.snap")
	args := []string{"--dir", filepath.Join(work, "official"), "--out", out, "--bundle", filepath.Join(work, "bundle"),
		"--from", "2022-02-03", "--to", "2022-02-04", "--sources", "cotahist,bcb", "--base-url", base}
	var so, se bytes.Buffer
	if err := runUpdate(context.Background(), args, &so, &se); err != nil {
		t.Fatalf("update: %v\n%s\n%s", err, so.String(), se.String())
	}
	for _, want := range []string{"fetch: 2 downloaded", "fetch: BCB SGS series: 2 answers stored", "BCB: 2 SGS answers, 0 PTAX closing-rate files; points: SELIC 527, IPCA 24",
		"left out: 1,060 points published after the as-of day; 698 Selic targets of weekends and holidays"} {
		if !strings.Contains(so.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, so.String())
		}
	}
	ds, _, err := snapshot.Load(out, snapshot.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for tk, want := range map[string]struct {
		day   string
		close engine.Num
	}{"SELIC": {"2022-02-04", 10.75}, "IPCA": {"2021-12-01", 0.73}} {
		a, ok := ds.Asset(tk)
		if !ok || a.StockType != engine.ClassMacro || a.Issuer != nil {
			t.Fatalf("%s: %v %+v", tk, ok, a)
		}
		s := a.Daily
		n := s.Len()
		if n == 0 || s.Dates[n-1].String() != want.day || s.Close(n-1) != want.close || s.Open(n-1).Valid() {
			t.Errorf("%s: %d points, want the last on %s at %v", tk, n, want.day, want.close)
		}
	}
}

// What make run-real serves of the macro series: the real SGS answers of
// SELIC and IPCA up to the samples' as-of day (2022-02-04), checked
// against the Banco Central's figures; the closing rates of 2026-07-31
// are after it and are not served.
func TestRealMacroSeries(t *testing.T) {
	if testing.Short() {
		t.Skip("imports the real samples")
	}
	ds, summary := realDataset(t)
	if !strings.Contains(summary, "BCB: 3 SGS answers, 1 PTAX closing-rate files; points: SELIC 527, IPCA 144") {
		t.Errorf("summary:\n%s", summary)
	}
	api, key := apiWithKey(t, ds)
	body := `{"tickers":["SELIC","IPCA","USD"],"type":"historical","start_date":"2021-03-01","end_date":"2021-03-26"}`
	r := httptest.NewRequest("POST", "/v2/quotes", strings.NewReader(body))
	r.Header.Set("Authorization", "Bearer "+key)
	w := httptest.NewRecorder()
	api.ServeHTTP(w, r)
	var got map[string]json.RawMessage
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil || w.Code != 200 {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	for tk, want := range map[string]string{
		"SELIC": `{"date":"2021-03-26T00:00:00Z","open_price":null,"close_price":2.75,"highest_price":null,"lowest_price":null,"volume":null,"currency":"BRL","variation":0,"variation_value":0,"adjustment_factor":1}`,
		"IPCA":  `{"date":"2021-03-01T00:00:00Z","open_price":null,"close_price":0.93,"highest_price":null,"lowest_price":null,"volume":null,"currency":"BRL","variation":0.08139534883720945,"variation_value":0.07,"adjustment_factor":1}`,
		"USD":   `{"error":{"status":404,"message":"Ticker not found"}}`,
	} {
		if !strings.Contains(string(got[tk]), want) {
			t.Errorf("%s: %s, want it to hold %s", tk, got[tk], want)
		}
	}
}

func TestImportBCBErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "notes.txt")
	os.WriteFile(bad, []byte("x"), 0o644)
	var so, se bytes.Buffer
	for args, want := range map[string]string{
		"--bcb " + bad:                        "not a Banco Central file",
		"--bcb IGPM=" + bad:                   `"IGPM" is no series of the mapping`,
		"--bcb " + filepath.Join(dir, "none"): "none",
	} {
		err := runImport(context.Background(), append(strings.Fields(args), "--as-of", "2022-02-04", "--out", filepath.Join(dir, "b")), &so, &se)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", args, err, want)
		}
	}
}

// The macro series an import adds answer POST /quotes: CDI from an SGS
// CSV answer, the currencies of the closing-rates files by ISO code; a
// holiday (2021-04-21) is no datapoint.
func TestMacroQuotes(t *testing.T) {
	fx := "../../snapshot/ingest/bcb/testdata"
	work := t.TempDir()
	var so, se bytes.Buffer
	args := []string{"--bcb", "CDI=" + fx + "/cdi_2021-04.csv", "--bcb", fx + "/20210420.csv," + fx + "/20210422.csv",
		"--as-of", "2021-04-23", "--out", filepath.Join(work, "bundle")}
	if err := runImport(context.Background(), args, &so, &se); err != nil {
		t.Fatalf("import: %v\n%s", err, se.String())
	}
	snap := filepath.Join(work, "s.snap")
	if err := runBuild(context.Background(), []string{"--from", filepath.Join(work, "bundle"), "--out", snap}, &so, &se); err != nil {
		t.Fatal(err)
	}
	ds, _, err := snapshot.Load(snap, snapshot.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	api, key := apiWithKey(t, ds)
	r := httptest.NewRequest("POST", "/v2/quotes", strings.NewReader(`{"tickers":["CDI","USD","EUR","ARS"],"start_date":"2021-04-19","end_date":"2021-04-23"}`))
	r.Header.Set("Authorization", "Bearer "+key)
	w := httptest.NewRecorder()
	api.ServeHTTP(w, r)
	var got map[string][]struct {
		Date  string   `json:"date"`
		Close *float64 `json:"close_price"`
		Open  *float64 `json:"open_price"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil || w.Code != 200 {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	for tk, want := range map[string]string{
		"CDI": "2021-04-19 2.65, 2021-04-20 2.65, 2021-04-22 2.65", // the 23rd's is published on the 24th
		"USD": "2021-04-20 5.5517, 2021-04-22 5.5061",
		"EUR": "2021-04-20 6.6749, 2021-04-22 6.6194",
		"ARS": "2021-04-20 0.05974, 2021-04-22 0.05923",
	} {
		var s []string
		for _, p := range got[tk] {
			if p.Close == nil || p.Open != nil {
				t.Errorf("%s %s: close %v open %v", tk, p.Date, p.Close, p.Open)
				continue
			}
			s = append(s, p.Date[:10]+" "+strconv.FormatFloat(*p.Close, 'f', -1, 64))
		}
		if strings.Join(s, ", ") != want {
			t.Errorf("%s: %s, want %s", tk, strings.Join(s, ", "), want)
		}
	}
}
