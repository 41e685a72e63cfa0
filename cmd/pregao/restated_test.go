package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/httpapi"
	"github.com/pregao/pregao/snapshot"
	"github.com/pregao/pregao/snapshot/ingest/demo"
	"github.com/pregao/pregao/snapshot/ingest/official"
)

// TestFetchRestatementAsOf is point in time across a restatement, from
// the CVM's downloads to the API: a server republishes each DFP and ITR
// year as package official writes the CVM's publications (each download
// holds the latest version of each filing of its day), pregao fetch runs
// once per publication, and pregao update --no-fetch imports the folder.
// At an as_of before a restatement the raw reports answer the filing's
// version 1 with its figures, after it version 2. The same import
// without the earlier downloads (what a fetch that overwrote them left)
// answers nothing before the restatement, and its summary says why.
func TestFetchRestatementAsOf(t *testing.T) {
	if testing.Short() {
		t.Skip("imports and builds twice")
	}
	sz := demo.ScaleSize(1)
	sz.Companies, sz.SponsoredBDRs, sz.UnsponsoredBDRs, sz.FIIs, sz.ETFs = 20, 2, 2, 4, 2
	sz.IntradayTickers, sz.HistoryFrom, sz.ReportsFrom, sz.FundReportsFrom, sz.EventsFrom = 0, 2024, 2024, 2025, 2025
	u := demo.GenerateSize(5, sz)
	// A restated filing: its consolidated DRE at versions 1 and 2.
	var v1, v2 *engine.Report
	for i := range u.Reports {
		r := &u.Reports[i]
		if r.Version == 2 && len(r.CompanyID) == 14 && r.Statement.String() == "DRE" && r.Aggregation.String() == engine.AggConsolidated {
			v2 = r
			break
		}
	}
	for i := range u.Reports {
		r := &u.Reports[i]
		if v2 != nil && r.Version == 1 && r.CompanyID == v2.CompanyID && r.Form == v2.Form && r.Statement == v2.Statement &&
			r.Aggregation == v2.Aggregation && r.ReferenceDate == v2.ReferenceDate && r.StartDate == v2.StartDate {
			v1 = r
		}
	}
	if v1 == nil {
		t.Fatal("the demo market has no restated filing: pick another seed")
	}
	src := t.TempDir()
	if _, err := official.Write(src, u, official.Options{}); err != nil {
		t.Fatal(err)
	}
	// The publications of each yearly archive, in order: the earlier
	// downloads (NAME.TIME.zip), then the official name.
	pubs := map[string][]string{} // URL path -> files of src
	for _, d := range []string{official.DFPDir, official.ITRDir} {
		m, _ := filepath.Glob(filepath.Join(src, filepath.FromSlash(d), "*.zip"))
		sort.Strings(m)
		for _, f := range m {
			parts := strings.Split(filepath.Base(f), ".")
			name := parts[0] + "." + parts[len(parts)-1]
			p := "/" + d + "/" + name
			pubs[p] = append(pubs[p], f)
		}
	}
	rounds := 0
	for _, l := range pubs {
		rounds = max(rounds, len(l))
	}
	if rounds < 2 {
		t.Fatalf("no year written as two publications: %v", pubs)
	}
	var round atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l := pubs[r.URL.Path]
		if l == nil {
			http.NotFound(w, r)
			return
		}
		b, err := os.ReadFile(l[min(int(round.Load()), len(l)-1)])
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		sum := sha256.Sum256(b)
		w.Header().Set("ETag", `"`+hex.EncodeToString(sum[:8])+`"`)
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(b))
	}))
	defer ts.Close()
	dst := t.TempDir()
	kept := 0
	for k := range rounds {
		round.Store(int32(k))
		for p := range pubs {
			form, year := "dfp", strings.TrimSuffix(path.Base(p), ".zip")[len("dfp_cia_aberta_"):]
			if strings.HasPrefix(path.Base(p), "itr_") {
				form = "itr"
			}
			var so, se bytes.Buffer
			args := []string{"--sources", form, "--from", year + "-01-01", "--dir", dst, "--base-url", ts.URL}
			if err := runFetch(context.Background(), args, &so, &se); err != nil {
				t.Fatalf("fetch %v: %v\n%s", args, err, se.String())
			}
			if strings.Contains(so.String(), "1 with other content") {
				kept++
			}
		}
	}
	// Every publication was fetched, each earlier one kept once.
	want := 0
	for _, l := range pubs {
		want += len(l) - 1
	}
	if kept != want {
		t.Errorf("%d downloads kept beside a newer one, want %d", kept, want)
	}
	t.Logf("%d yearly archives, %d earlier downloads kept in %d rounds of fetches; %s %s of %s restated on %s",
		len(pubs), kept, rounds, v2.Form, v2.ReferenceDate, v2.CompanyID, v2.PublishDate.Time().Format(time.RFC3339))
	// The rest of the official files as written.
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if r := filepath.ToSlash(rel); strings.HasPrefix(r, official.DFPDir+"/") || strings.HasPrefix(r, official.ITRDir+"/") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dst, rel)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	ref := v2.ReferenceDate.String()
	spDay := func(s engine.Stamp) engine.Date { // the São Paulo day of s
		y, m, d := s.Time().In(saoPaulo).Date()
		return engine.MakeDate(y, m, d)
	}
	before := (spDay(v2.PublishDate) - 1).String() // the day before the restatement
	q := fmt.Sprintf("/v2/companies/%s/raw-reports?report_type=DRE&aggregation=CONSOLIDATED&reference_date=%s&flat=true&as_of=", v2.CompanyID, ref)
	cogs := func(r *engine.Report) float64 {
		acc := r.AccountList()
		for i := range acc.Len() {
			if a := acc.At(i); a.Code() == "3.02" {
				return float64(a.Value)
			}
		}
		t.Fatalf("no account 3.02 in %s %s version %d", r.Form, r.ReferenceDate, r.Version)
		return 0
	}
	cogs1, cogs2 := cogs(v1), cogs(v2)
	if cogs1 == cogs2 {
		t.Fatalf("versions 1 and 2 have the same 3.02 (%v): pick another seed", cogs1)
	}

	// With every download: version 1 before the restatement, version 2
	// after it.
	api, key, summary := updateAndServe(t, dst)
	if strings.Contains(summary, "no input holds their earlier versions") {
		t.Errorf("summary names missing versions although every download was imported:\n%s", summary)
	}
	if got := rawVersions(t, api, key, q+before); len(got) != 1 || got[0].Version != 1 || !holds(got[0].Data, cogs1) || holds(got[0].Data, cogs2) {
		t.Errorf("as_of %s (before the restatement): %+v, want version 1 with 3.02 = %v", before, got, cogs1)
	}
	after := spDay(v2.PublishDate).String()
	if got := rawVersions(t, api, key, q+after+"&latest_by_reference_date=true"); len(got) != 1 || got[0].Version != 2 || !holds(got[0].Data, cogs2) {
		t.Errorf("as_of %s (the restatement's day): %+v, want version 2 with 3.02 = %v", after, got, cogs2)
	}

	// Without the earlier downloads: nothing before the restatement, and
	// the summary says so.
	m, _ := filepath.Glob(filepath.Join(dst, "dados/CIA_ABERTA/DOC/*/DADOS/*_cia_aberta_*.*.zip"))
	if len(m) != want {
		t.Fatalf("%d kept downloads in the folder, want %d", len(m), want)
	}
	for _, f := range m {
		os.Remove(f)
	}
	api, key, summary = updateAndServe(t, dst)
	if !strings.Contains(summary, "no input holds their earlier versions") {
		t.Errorf("summary does not name the missing versions:\n%s", summary)
	}
	if got := rawVersions(t, api, key, q+before); len(got) != 0 {
		t.Errorf("as_of %s without the earlier downloads: %+v, want none", before, got)
	}
}

var saoPaulo = time.FixedZone("BRT", -3*3600)

// updateAndServe runs pregao update --no-fetch on dir and serves the
// snapshot: the API, a key and the update's output (the import summary).
func updateAndServe(t *testing.T, dir string) (*httpapi.API, string, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "restated.snap")
	var so, se bytes.Buffer
	if err := runUpdate(context.Background(), []string{"--no-fetch", "--dir", dir, "--out", out}, &so, &se); err != nil {
		t.Fatalf("update: %v\n%s\n%s", err, so.String(), se.String())
	}
	ds, _, err := snapshot.Load(out, snapshot.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	store := &engine.Store{}
	store.Publish(ds)
	keys, key := delayedKey(t, ds)
	api := httpapi.New(httpapi.DefaultConfig(), store, keys, httpapi.SnapshotClock{Store: store}, prometheus.NewRegistry(), nil)
	return api, key, so.String()
}

type rawReport struct {
	Version int                 `json:"version"`
	Data    map[string]*float64 `json:"data"`
}

func rawVersions(t *testing.T, api *httpapi.API, key, url string) []rawReport {
	t.Helper()
	r := httptest.NewRequest("GET", url, nil)
	r.Header.Set("Authorization", "Bearer "+key)
	w := httptest.NewRecorder()
	api.ServeHTTP(w, r)
	if w.Code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", url, w.Code, w.Body)
	}
	var out []rawReport
	if err := json.Unmarshal(w.Body.Bytes(), &out); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return out
}

// holds reports whether one of data's values is v.
func holds(data map[string]*float64, v float64) bool {
	for _, x := range data {
		if x != nil && *x == v {
			return true
		}
	}
	return false
}

// TestImportKeptFCADownload: pregao fetch keeps an earlier download of
// the FCA's yearly archive beside the newest, and the import reads both.
// The FCA's rows of one filing given twice (the same archive kept under
// its earlier name) change nothing the API answers: the companies, their
// securities and former names are the ones of one download.
func TestImportKeptFCADownload(t *testing.T) {
	if testing.Short() {
		t.Skip("imports and builds twice")
	}
	sz := demo.ScaleSize(1)
	sz.Companies, sz.SponsoredBDRs, sz.UnsponsoredBDRs, sz.FIIs, sz.ETFs = 20, 2, 2, 4, 2
	sz.IntradayTickers, sz.HistoryFrom, sz.ReportsFrom, sz.FundReportsFrom, sz.EventsFrom = 0, 2024, 2024, 2025, 2025
	u := demo.GenerateSize(5, sz)
	dir := t.TempDir()
	if _, err := official.Write(dir, u, official.Options{}); err != nil {
		t.Fatal(err)
	}
	answers := func(api *httpapi.API, key string) map[string]string {
		out := map[string]string{}
		get := func(url string) string {
			r := httptest.NewRequest("GET", url, nil)
			r.Header.Set("Authorization", "Bearer "+key)
			w := httptest.NewRecorder()
			api.ServeHTTP(w, r)
			return fmt.Sprintf("%d %s", w.Code, w.Body)
		}
		list := get("/v2/companies?bdr=true&show_sector=true")
		out["list"] = list
		var items []struct {
			ID string `json:"company_id"`
		}
		if err := json.Unmarshal([]byte(list[4:]), &items); err != nil || len(items) == 0 {
			t.Fatalf("companies: %v: %.200s", err, list)
		}
		for _, it := range items {
			out[it.ID] = get("/v2/companies/" + it.ID)
		}
		return out
	}
	api, key, _ := updateAndServe(t, dir)
	one := answers(api, key)

	m, _ := filepath.Glob(filepath.Join(dir, filepath.FromSlash(official.FCADir), "fca_cia_aberta_*.zip"))
	if len(m) == 0 {
		t.Fatal("no FCA archive written")
	}
	for _, f := range m {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		kept := strings.TrimSuffix(f, ".zip") + ".20250102T030405Z.zip"
		if err := os.WriteFile(kept, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	api, key, _ = updateAndServe(t, dir)
	two := answers(api, key)
	if len(one) != len(two) {
		t.Fatalf("%d answers with one FCA download, %d with two", len(one), len(two))
	}
	for k, v := range one {
		if two[k] != v {
			t.Errorf("%s with the FCA kept twice:\n%.400s\nwant\n%.400s", k, two[k], v)
		}
	}
}
