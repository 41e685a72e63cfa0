package fetch_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/b3"
	"github.com/pregao/pregao/snapshot/ingest/fetch"
	"github.com/pregao/pregao/snapshot/ingest/fetch/fetchtest"
)

// start serves the samples; the clock is 2026-11-26 12:00 in São Paulo.
func start(t *testing.T) (*fetchtest.Server, *fetch.Client, *time.Time) {
	t.Helper()
	s, err := fetchtest.Samples()
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	now := time.Date(2026, 11, 26, 15, 0, 0, 0, time.UTC)
	cl := &fetch.Client{BaseURL: ts.URL, HTTP: ts.Client(), Backoff: time.Millisecond, PageSize: 20, Now: func() time.Time { return now }}
	return s, cl, &now
}

var all = fetch.Services{Indexes: []string{"IBOV", "SMLL"}, Companies: []string{"ABEV", "PETR"}, Listings: true}

func read(t *testing.T, dir, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestFetchServices fetches two index portfolios (5 and 6 pages of 20),
// AMBEV's supplement, details and cash dividends (2 pages), an unknown
// company and the fund lists; the stored answers are the official
// answers, every page merged, and read as the importer reads them.
func TestFetchServices(t *testing.T) {
	s, cl, _ := start(t)
	dir := t.TempDir()
	res, err := cl.FetchServices(context.Background(), dir, all)
	if err != nil {
		t.Fatal(err)
	}
	// IBOV 5 pages + SMLL 6 + ABEV 1+1+2 + PETR 1 + 2 lists.
	if res.Downloaded != 7 || res.Missing != 1 || res.Skipped != 0 || res.Requests != 18 {
		t.Errorf("result %+v", res)
	}
	if n := s.Count("GetPortfolioDay/IBOV"); n != 5 {
		t.Errorf("IBOV: %d requests, want 5 pages", n)
	}
	ibov := read(t, dir, "indexProxy/indexCall/GetPortfolioDay/IBOV/2026-11-26.json")
	pf, err := b3.ReadPortfolioJSON(ibov, "IBOV", "IBOV", engine.NoDate)
	if err != nil || len(pf.Assets) != 87 || !pf.AsOf.Valid() || pf.Assets[0].Ticker != "WEGE3" {
		t.Fatalf("IBOV: %v %+v", err, pf)
	}
	var whole, merged struct {
		Header  json.RawMessage
		Results []json.RawMessage
	}
	json.Unmarshal(s.Portfolios["IBOV"], &whole)
	json.Unmarshal(ibov, &merged)
	if !bytes.Equal(whole.Header, merged.Header) || len(merged.Results) != len(whole.Results) {
		t.Error("merged answer differs from the whole answer")
	}
	for i := range whole.Results {
		if !bytes.Equal(whole.Results[i], merged.Results[i]) {
			t.Fatalf("result %d differs", i)
		}
	}
	smll, err := b3.ReadPortfolioJSON(read(t, dir, "indexProxy/indexCall/GetPortfolioDay/SMLL/2026-11-26.json"), "SMLL", "SMLL", engine.NoDate)
	if err != nil || len(smll.Assets) != 114 {
		t.Fatalf("SMLL: %v", err)
	}
	cash, _, err := b3.ReadCashDividends(read(t, dir, "listedCompaniesProxy/CompanyCall/GetListedCashDividends/ABEV.json"), "ABEV",
		b3.CashContext{CompanyID: "07526557000100", Symbol: "ABEV", Tickers: map[string]string{"CS": "ABEV3"}})
	if err != nil || len(cash) != 29 {
		t.Errorf("cash dividends: %d, %v", len(cash), err)
	}
	if sup, err := b3.ReadSupplement(read(t, dir, "listedCompaniesProxy/CompanyCall/GetListedSupplementCompany/ABEV.json"), "ABEV"); err != nil || sup.CVMCode != "23264" {
		t.Errorf("supplement: %v", err)
	}
	if d, err := b3.ReadDetails(read(t, dir, "listedCompaniesProxy/CompanyCall/GetDetail/ABEV.json"), "ABEV"); err != nil || d.CNPJ != "07526557000100" {
		t.Errorf("details: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "listedCompaniesProxy/CompanyCall/GetListedSupplementCompany/PETR.json")); err == nil {
		t.Error("an unknown company's empty answer was stored")
	}
	for tf, name := range map[int]string{7: "fundosListados.csv", 20: "etfsListados.csv"} {
		got := read(t, dir, "fundsProxy/fundsCall/GetListFundDownload/"+name)
		if !bytes.Equal(got, s.FundLists[tf]) {
			t.Errorf("%s differs from the export", name)
		}
		ls, _, err := b3.ReadListings(bytes.NewReader(got), name, false)
		if err != nil || len(ls) < 80 {
			t.Errorf("%s: %d listings, %v", name, len(ls), err)
		}
	}
	for _, e := range []string{".part"} {
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if strings.HasSuffix(p, e) {
				t.Errorf("%s left behind", p)
			}
			return nil
		})
	}
}

// TestFetchServicesIdempotent: a second run the same day asks nothing; the
// next day asks everything again, the index portfolios into new dated
// files.
func TestFetchServicesIdempotent(t *testing.T) {
	s, cl, now := start(t)
	dir := t.TempDir()
	if _, err := cl.FetchServices(context.Background(), dir, all); err != nil {
		t.Fatal(err)
	}
	before := s.Total()
	res, err := cl.FetchServices(context.Background(), dir, all)
	if err != nil {
		t.Fatal(err)
	}
	if s.Total() != before || res.Requests != 0 || res.Downloaded != 0 || res.Skipped != 8 {
		t.Errorf("second run: %+v, %d requests", res, s.Total()-before)
	}
	// A stored answer deleted locally is fetched again.
	os.Remove(filepath.Join(dir, "listedCompaniesProxy/CompanyCall/GetDetail/ABEV.json"))
	if res, _ = cl.FetchServices(context.Background(), dir, all); res.Downloaded != 1 || res.Requests != 1 {
		t.Errorf("deleted answer: %+v", res)
	}
	*now = now.Add(24 * time.Hour)
	res, err = cl.FetchServices(context.Background(), dir, all)
	if err != nil || res.Downloaded != 7 || res.Missing != 1 {
		t.Errorf("next day: %+v %v", res, err)
	}
	read(t, dir, "indexProxy/indexCall/GetPortfolioDay/IBOV/2026-11-27.json")
	read(t, dir, "indexProxy/indexCall/GetPortfolioDay/IBOV/2026-11-26.json")
	// 21:30 in São Paulo is still the same day; 03:30 UTC the next
	// morning is 00:30 there: a new day.
	*now = time.Date(2026, 11, 28, 0, 30, 0, 0, time.UTC)
	if res, _ = cl.FetchServices(context.Background(), dir, all); res.Requests != 0 {
		t.Errorf("same São Paulo day: %+v", res)
	}
	*now = time.Date(2026, 11, 28, 3, 30, 0, 0, time.UTC)
	if res, _ = cl.FetchServices(context.Background(), dir, all); res.Downloaded != 7 {
		t.Errorf("new São Paulo day: %+v", res)
	}
}

// TestFetchServicesResume: a run that fails part way (the cash dividends
// keep failing) keeps what it stored; the next run asks only for the rest.
func TestFetchServicesResume(t *testing.T) {
	s, cl, _ := start(t)
	dir := t.TempDir()
	s.Fail["GetListedCashDividends/AMBEVSA"] = 2
	cl.Attempts = 2
	_, err := cl.FetchServices(context.Background(), dir, all)
	if err == nil || !strings.Contains(err.Error(), "503") || !strings.Contains(err.Error(), fetch.B3APIHost+"/"+fetch.SvcCashDividends+"/") {
		t.Fatalf("want a 503 naming the URL, got %v", err)
	}
	t.Logf("interrupted: %v", err)
	before := map[string]int{}
	for _, k := range []string{"GetPortfolioDay/IBOV", "GetPortfolioDay/SMLL", "GetListedSupplementCompany/ABEV", "GetDetail/23264"} {
		before[k] = s.Count(k)
	}
	res, err := cl.FetchServices(context.Background(), dir, all)
	if err != nil {
		t.Fatal(err)
	}
	for k, n := range before {
		if s.Count(k) != n {
			t.Errorf("%s asked again after the interruption", k)
		}
	}
	// ABEV cash (2 pages), PETR, two lists.
	if res.Requests != 5 || res.Downloaded != 3 || res.Skipped != 4 {
		t.Errorf("resumed run %+v", res)
	}
	if _, err := os.Stat(filepath.Join(dir, "listedCompaniesProxy/CompanyCall/GetListedCashDividends/ABEV.json")); err != nil {
		t.Error(err)
	}
}

// TestFetchServicesRetry: a 503 then success; a 404 is an error naming the
// URL, not retried; an interrupted request costs nothing.
func TestFetchServicesRetry(t *testing.T) {
	s, cl, _ := start(t)
	dir := t.TempDir()
	s.Fail["GetPortfolioDay/IBOV"] = 1
	res, err := cl.FetchServices(context.Background(), dir, fetch.Services{Indexes: []string{"IBOV"}})
	if err != nil || res.Downloaded != 1 || res.Requests != 6 {
		t.Fatalf("503 then 200: %+v %v", res, err)
	}
	s.Gone["GetDetail/23264"] = true
	_, err = cl.FetchServices(context.Background(), dir, fetch.Services{Companies: []string{"ABEV"}})
	if err == nil || !strings.Contains(err.Error(), "404") || !strings.Contains(err.Error(), fetch.SvcDetail+"/") {
		t.Errorf("404: %v", err)
	}
	if n := s.Count("GetDetail/23264"); n != 1 {
		t.Errorf("404 asked %d times", n)
	}
	// An unknown company first, into a folder that does not exist yet.
	fresh := filepath.Join(t.TempDir(), "new", "folder")
	if res, err := cl.FetchServices(context.Background(), fresh, fetch.Services{Companies: []string{"WWWW"}}); err != nil || res.Missing != 1 {
		t.Errorf("unknown company into a new folder: %+v %v", res, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := cl.FetchServices(ctx, t.TempDir(), all); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// TestFetchServicesBadInput: bad names are refused before any request; an
// index B3 does not know is an error; the server refuses a parameter that
// is not base64 JSON and the client does not retry a 400; answers over
// the size limit are refused.
func TestFetchServicesBadInput(t *testing.T) {
	s, cl, _ := start(t)
	dir := t.TempDir()
	for _, bad := range []fetch.Services{{Indexes: []string{"ib ov"}}, {Indexes: []string{""}}, {Companies: []string{"ABEV3"}}} {
		if _, err := cl.FetchServices(context.Background(), dir, bad); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
	if s.Total() != 0 {
		t.Errorf("%d requests for bad names", s.Total())
	}
	_, err := cl.FetchServices(context.Background(), dir, fetch.Services{Indexes: []string{"XXXX"}})
	if err == nil || !strings.Contains(err.Error(), "no result") || !strings.Contains(err.Error(), fetch.SvcPortfolioDay) {
		t.Errorf("unknown index: %v", err)
	}
	ts := httptest.NewServer(s)
	defer ts.Close()
	for _, p := range []string{"/" + fetch.SvcPortfolioDay + "/!!!notbase64", "/" + fetch.SvcPortfolioDay + "/W10=", "/" + fetch.SvcSupplement + "/e30="} {
		resp, err := http.Get(ts.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400", p, resp.StatusCode)
		}
	}
	n := 0
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n++
		http.Error(w, "bad parameter", http.StatusBadRequest)
	}))
	defer bad.Close()
	c2 := &fetch.Client{BaseURL: bad.URL, Backoff: time.Millisecond}
	if _, err := c2.FetchServices(context.Background(), dir, fetch.Services{Indexes: []string{"IBOV"}}); err == nil || !strings.Contains(err.Error(), "400") || n != 1 {
		t.Errorf("400: %v after %d requests", err, n)
	}
	cl.MaxAnswerBytes = 1000
	before := s.Total()
	if _, err := cl.FetchServices(context.Background(), dir, fetch.Services{Indexes: []string{"IBOV"}}); err == nil || !strings.Contains(err.Error(), "too large") || s.Total()-before != 1 {
		t.Errorf("too large: %v", err)
	}
	// A garbled answer is retried, then reported.
	garbled := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"page":`)) }))
	defer garbled.Close()
	c3 := &fetch.Client{BaseURL: garbled.URL, Backoff: time.Millisecond, Attempts: 3}
	if _, err := c3.FetchServices(context.Background(), dir, fetch.Services{Indexes: []string{"IBOV"}}); err == nil || !strings.Contains(err.Error(), "not the expected JSON") {
		t.Errorf("garbled: %v", err)
	}
}

// TestCompanyCodes takes the companies of the sample COTAHIST day.
func TestCompanyCodes(t *testing.T) {
	s, cl, _ := start(t)
	dir := t.TempDir()
	items, _ := fetch.Plan([]string{"cotahist"}, engine.MakeDate(2022, 2, 3), engine.MakeDate(2022, 2, 7), false)
	if _, err := cl.FetchAll(context.Background(), dir, items); err != nil {
		t.Fatal(err)
	}
	codes, err := fetch.CompanyCodes(dir, items)
	if err != nil {
		t.Fatal(err)
	}
	if len(codes) < 300 || codes[0] > "ABEV" {
		t.Errorf("%d codes from %s", len(codes), codes[0])
	}
	has := map[string]bool{}
	for _, c := range codes {
		has[c] = true
	}
	for _, c := range []string{"ABEV", "PETR", "VALE", "ITUB", "TAEE"} {
		if !has[c] {
			t.Errorf("%s missing", c)
		}
	}
	if _, err := fetch.CompanyCodes(t.TempDir(), items); err == nil {
		t.Error("no COTAHIST: no error")
	}
	_ = s
}

// BenchmarkFetchLocal fetches, from the local stand-in, what pregao update
// --sources cotahist,cad,indexes,companies,listings asks for a day: the
// COTAHIST day and the registry, two index portfolios, the listed-company
// data of the 328 companies the day quotes (AMBEV's real answers,
// synthetic answers without events for the others: three requests each,
// as against B3) and the two fund lists, at the default page size and
// without pacing. It reports the files stored, the bytes and the
// requests per run.
//
//	go test -run '^$' -bench FetchLocal -benchtime 5x ./snapshot/ingest/fetch/
func BenchmarkFetchLocal(b *testing.B) {
	s, err := fetchtest.Samples()
	if err != nil {
		b.Fatal(err)
	}
	s.Synthetic = true
	ts := httptest.NewServer(s)
	defer ts.Close()
	cl := &fetch.Client{BaseURL: ts.URL, HTTP: ts.Client(), Backoff: time.Millisecond}
	items, _ := fetch.Plan([]string{"cotahist", "cad"}, engine.MakeDate(2022, 2, 3), engine.MakeDate(2022, 2, 3), false)
	var files, reqs int
	var bytes int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		dir := b.TempDir()
		res, err := cl.FetchAll(context.Background(), dir, items)
		if err != nil {
			b.Fatal(err)
		}
		codes, err := fetch.CompanyCodes(dir, items)
		if err != nil {
			b.Fatal(err)
		}
		sres, err := cl.FetchServices(context.Background(), dir, fetch.Services{Indexes: []string{"IBOV", "SMLL"}, Companies: codes, Listings: true})
		if err != nil {
			b.Fatal(err)
		}
		files, reqs, bytes = res.Downloaded+sres.Downloaded, len(items)+sres.Requests, sres.Bytes
		for _, it := range items {
			fi, _ := os.Stat(filepath.Join(dir, filepath.FromSlash(it.Path)))
			bytes += fi.Size()
		}
	}
	b.ReportMetric(float64(files), "files/op")
	b.ReportMetric(float64(reqs), "requests/op")
	b.ReportMetric(float64(bytes)/1e6, "MB/op")
}
