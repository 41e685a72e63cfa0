package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot"
	"github.com/pregao/pregao/snapshot/ingest/assemble"
	"github.com/pregao/pregao/snapshot/ingest/datafile"
	"github.com/pregao/pregao/snapshot/ingest/fetch/fetchtest"
)

// pregao update against a local server laid out as the official hosts:
// it fetches a day's COTAHIST and the CVM registry, imports them and
// writes a snapshot a server loads; a second run downloads nothing new
// and writes the same snapshot again.
func TestUpdateCommand(t *testing.T) {
	dir, _ := datafile.RealDir()
	quotes, err := os.ReadFile(filepath.Join(dir, "b3-cotahist/gbvbahia01__Spring-Batch-Cotahist/COTAHIST_D03022022.TXT.zip"))
	if err != nil {
		t.Fatal(err)
	}
	cad, err := datafile.ReadFile(filepath.Join(dir, "cvm-cad/cad_cia_aberta.csv.zst"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{
		"/InstDados/SerHist/COTAHIST_D03022022.ZIP":      quotes,
		"/dados/CIA_ABERTA/CAD/DADOS/cad_cia_aberta.csv": cad,
	}
	gets := 0
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		gets++
		w.Header().Set("ETag", `"`+filepath.Base(r.URL.Path)+`"`)
		http.ServeContent(w, r, r.URL.Path, time.Unix(1643900000, 0), bytes.NewReader(b))
	}))
	defer ts.Close()
	work := t.TempDir()
	out := filepath.Join(work, "pregao.snap")
	args := []string{"--dir", filepath.Join(work, "official"), "--out", out, "--from", "2022-02-03", "--to", "2022-02-04", "--sources", "cotahist,cad", "--base-url", ts.URL}
	var so, se bytes.Buffer
	if err := runUpdate(context.Background(), args, &so, &se); err != nil {
		t.Fatalf("update: %v\n%s\n%s", err, so.String(), se.String())
	}
	for _, want := range []string{"fetch: 2 downloaded", "wrote bundle", "wrote " + out} {
		if !strings.Contains(so.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, so.String())
		}
	}
	ds, h, err := snapshot.Load(out, snapshot.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if h.FormatVersion != 6 {
		t.Errorf("update wrote format %d, want 6 (the default)", h.FormatVersion)
	}
	if _, ok := ds.Asset("PETR4"); !ok || ds.AsOf().Format("2006-01-02") != "2022-02-03" || h.Counts["companies"] < 1000 {
		t.Errorf("snapshot: PETR4 %v, as_of %s, %d companies", ok, ds.AsOf(), h.Counts["companies"])
	}
	first, _ := os.ReadFile(out)
	so.Reset()
	before := gets
	if err := runUpdate(context.Background(), args, &so, &se); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(so.String(), "fetch: 0 downloaded") {
		t.Errorf("second run: %s", so.String())
	}
	if gets-before > 1 { // the daily file is immutable: only the registry is asked (conditionally)
		t.Errorf("second run fetched %d files", gets-before)
	}
	again, _ := os.ReadFile(out)
	if !bytes.Equal(first, again) {
		t.Error("the same files gave another snapshot")
	}
	// --format 5 still writes the deprecated format.
	if err := runUpdate(context.Background(), append(args, "--no-fetch", "--format", "5"), &so, &se); err != nil {
		t.Fatal(err)
	}
	if h, err := snapshot.ReadHeader(out); err != nil || h.FormatVersion != 5 {
		t.Errorf("update --format 5 wrote format %d (%v)", h.FormatVersion, err)
	}
	for _, bad := range [][]string{{"--out", out}, {"--dir", work}, {"--dir", t.TempDir(), "--out", out, "--no-fetch"}, append(args, "--format", "4")} {
		if err := runUpdate(context.Background(), bad, &so, &se); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}

func TestLastWeekday(t *testing.T) {
	for now, want := range map[string]string{
		"2026-11-26T12:00:00Z": "2026-11-25", // Thursday → Wednesday
		"2026-11-23T12:00:00Z": "2026-11-20", // Monday → Friday
		"2026-11-24T02:00:00Z": "2026-11-20", // Monday 23:00 in São Paulo → Friday
	} {
		tm, _ := time.Parse(time.RFC3339, now)
		if got, w := lastWeekday(tm), mustDay(t, want); got != w {
			t.Errorf("%s: %s, want %s", now, got, want)
		}
	}
}

func mustDay(t *testing.T, s string) engine.Date {
	t.Helper()
	d, err := engine.ParseDate(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// pregao update against the local stand-in of the official hosts, B3's
// services included: the COTAHIST day and the registry, two index
// portfolios (paginated), the listed-company data of every company the
// day quotes (AMBEV's real answers, synthetic ones without events for
// the others: 337 companies over the two days, 337 cash dividends files
// to import) and the fund lists. The snapshot has the
// indexes' members, AMBEV's cash dividends and its share event (a
// subscription); a second run asks the services nothing.
func TestUpdateB3Services(t *testing.T) {
	s, err := fetchtest.Samples()
	if err != nil {
		t.Fatal(err)
	}
	s.Synthetic = true
	ts := httptest.NewServer(s)
	defer ts.Close()
	work := t.TempDir()
	dir := filepath.Join(work, "official")
	out := filepath.Join(work, "pregao.snap")
	args := []string{"--dir", dir, "--out", out, "--from", "2022-02-03", "--to", "2022-02-04", "--base-url", ts.URL, "--pace", "0s",
		"--sources", "cotahist,cad,indexes,companies,listings", "--indexes", "IBOV,SMLL"}
	var so, se bytes.Buffer
	if err := runUpdate(context.Background(), args, &so, &se); err != nil {
		t.Fatalf("update: %v\n%s\n%s", err, so.String(), se.String())
	}
	if !strings.Contains(so.String(), "fetch: B3 services: 1015 answers stored") {
		t.Errorf("output:\n%s", so.String())
	}
	if n := s.Count("GetListedSupplementCompany/ABEV"); n != 1 {
		t.Errorf("ABEV supplement asked %d times", n)
	}
	ds, h, err := snapshot.Load(out, snapshot.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for sym, n := range map[string]int{"IBOV": 87, "SMLL": 114} {
		ix, ok := ds.Index(sym)
		if !ok || len(ix.Index.Members) != n {
			t.Errorf("index %s: %v", sym, ok)
		}
	}
	if h.Counts["cash_actions"] < 29 || h.Counts["share_actions"] < 1 || h.Counts["indexes"] != 2 {
		t.Errorf("counts %v", h.Counts)
	}
	abev := 0
	for _, c := range ds.CashActions() {
		if c.Ticker.String() == "ABEV3" {
			abev++
		}
	}
	if abev < 29 {
		t.Errorf("%d cash actions of ABEV3", abev)
	}
	before := s.Total()
	so.Reset()
	if err := runUpdate(context.Background(), args, &so, &se); err != nil {
		t.Fatal(err)
	}
	if got := s.Total() - before; got > 1 { // the registry, conditionally
		t.Errorf("second run made %d requests:\n%s", got, so.String())
	}
}

func TestOfficialInputs(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{
		"InstDados/SerHist/COTAHIST_D03022022.ZIP",
		"dados/CIA_ABERTA/CAD/DADOS/cad_cia_aberta.csv",
		"indexProxy/indexCall/GetPortfolioDay/IBOV/2026-11-25.json",
		"indexProxy/indexCall/GetPortfolioDay/IBOV/2026-11-26.json",
		"indexProxy/indexCall/GetPortfolioDay/IBOV/2026-11-27.json.part", // interrupted
		"indexProxy/indexCall/GetPortfolioDay/SMLL/2026-11-26.json",
		"indexProxy/indexCall/GetPortfolioDay/bad name/2026-11-26.json",
		"listedCompaniesProxy/CompanyCall/GetListedSupplementCompany/ABEV.json",
		"listedCompaniesProxy/CompanyCall/GetDetail/ABEV.json",
		"listedCompaniesProxy/CompanyCall/GetListedCashDividends/ABEV.json",
		"listedCompaniesProxy/CompanyCall/GetListedCashDividends/PETR.json",
		"fundsProxy/fundsCall/GetListFundDownload/fundosListados.csv",
		"api/download/InstrumentsConsolidatedFile/2026-11-25.csv",
		"dados/serie/bcdata.sgs.432/dados/2020-2029.json",
		"Download/fechamento/20260731.csv",
	} {
		p := filepath.Join(dir, filepath.FromSlash(f))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("x"), 0o644)
	}
	got := assemble.DefaultConfig()
	if err := officialInputs(dir, &got); err != nil {
		t.Fatal(err)
	}
	p := func(rel string) string { return filepath.Join(dir, filepath.FromSlash(rel)) }
	want := assemble.DefaultConfig()
	want.Cotahist = []string{p("InstDados/SerHist")}
	want.Cad = p("dados/CIA_ABERTA/CAD/DADOS/cad_cia_aberta.csv")
	want.Index = []string{
		"IBOV=" + p("indexProxy/indexCall/GetPortfolioDay/IBOV/2026-11-25.json"),
		"IBOV=" + p("indexProxy/indexCall/GetPortfolioDay/IBOV/2026-11-26.json"),
		"SMLL=" + p("indexProxy/indexCall/GetPortfolioDay/SMLL/2026-11-26.json"),
	}
	want.Cash = []string{
		"ABEV=" + p("listedCompaniesProxy/CompanyCall/GetListedCashDividends/ABEV.json"),
		"PETR=" + p("listedCompaniesProxy/CompanyCall/GetListedCashDividends/PETR.json"),
	}
	want.Supplement = []string{p("listedCompaniesProxy/CompanyCall/GetListedSupplementCompany")}
	want.Details = []string{p("listedCompaniesProxy/CompanyCall/GetDetail")}
	want.Listings = []string{p("fundsProxy/fundsCall/GetListFundDownload")}
	want.Instruments = []string{p("api/download/InstrumentsConsolidatedFile")}
	want.BCB = []string{p("dados/serie"), p("Download/fechamento")}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("inputs:\n%+v\nwant:\n%+v", got, want)
	}
	empty := assemble.DefaultConfig()
	if err := officialInputs(t.TempDir(), &empty); err == nil {
		t.Error("empty folder: no error")
	}
}
