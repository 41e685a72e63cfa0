package fetch_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/bcb"
	"github.com/pregao/pregao/snapshot/ingest/fetch"
	"github.com/pregao/pregao/snapshot/ingest/fetch/fetchtest"
)

func day(y, m, d int) engine.Date { return engine.MakeDate(y, time.Month(m), d) }

// FetchSGS stores each series' decade blocks as the SGS answers them (the
// stand-in enforces the 10-year cap on the daily series 432), records the
// blocks without values absent, asks nothing again the same day, and the
// next day only the blocks that may still be revised.
func TestFetchSGS(t *testing.T) {
	s, cl, now := start(t)
	dir := t.TempDir()
	from, to := day(2000, 1, 1), day(2026, 11, 26)
	res, err := cl.FetchSGS(context.Background(), dir, from, to, nil)
	if err != nil {
		t.Fatal(err)
	}
	// 3 series x 3 blocks (2000, 2010, 2020): 432 and 433 have 2020's.
	if res.Downloaded != 2 || res.Missing != 7 || res.Skipped != 0 || res.Requests != 9 {
		t.Errorf("first run %+v", res)
	}
	got := read(t, dir, "dados/serie/bcdata.sgs.432/dados/2020-2029.json")
	if !bytes.Equal(got, s.SGS[432]) {
		t.Error("stored answer differs from the Banco Central's bytes")
	}
	f, err := bcb.ReadSGS(bytes.NewReader(got), "432", false)
	if err != nil || len(f.Points) != 2236 {
		t.Fatalf("stored answer: %v, %d points", err, len(f.Points))
	}
	res, err = cl.FetchSGS(context.Background(), dir, from, to, nil)
	if err != nil || res.Requests != 0 || res.Skipped != 9 || res.Downloaded != 0 {
		t.Errorf("second run the same day: %+v %v", res, err)
	}
	*now = now.Add(24 * time.Hour)
	res, err = cl.FetchSGS(context.Background(), dir, from, to, nil)
	if err != nil || res.Requests != 3 || res.Skipped != 6 {
		t.Errorf("next day: %+v %v (want the 3 blocks of this decade asked again, the settled ones not)", res, err)
	}
	if fetch.SGSPath(433, 2020) != "dados/serie/bcdata.sgs.433/dados/2020-2029.json" {
		t.Error("path")
	}
}

// A run stopped by an error keeps what it stored; the next run asks only
// what is missing.
func TestFetchSGSResume(t *testing.T) {
	s, cl, _ := start(t)
	cl.Attempts = 2
	dir := t.TempDir()
	p433 := "/dados/serie/bcdata.sgs.433/dados"
	s.Fail[p433] = 2
	from, to := day(2021, 3, 1), day(2022, 2, 4)
	if _, err := cl.FetchSGS(context.Background(), dir, from, to, nil); err == nil || !strings.Contains(err.Error(), "SGS series 433") {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "dados/serie/bcdata.sgs.432/dados/2020-2029.json")); err != nil {
		t.Fatal("432 not kept after the failure of 433")
	}
	res, err := cl.FetchSGS(context.Background(), dir, from, to, nil)
	if err != nil || res.Skipped != 1 || res.Downloaded != 1 || res.Missing != 1 {
		t.Errorf("resumed run: %+v %v", res, err)
	}
	if n := s.Count("/dados/serie/bcdata.sgs.432/dados"); n != 1 {
		t.Errorf("432 asked %d times", n)
	}
}

// The firewall's page (HTML, status 200) is no series: retried, then an
// error naming it; nothing is stored under the series' name.
func TestFetchSGSRejected(t *testing.T) {
	s, cl, _ := start(t)
	cl.Attempts = 2
	dir := t.TempDir()
	p := "/dados/serie/bcdata.sgs.432/dados"
	s.Rejected[p] = 1
	res, err := cl.FetchSGS(context.Background(), dir, day(2021, 3, 1), day(2021, 3, 1), []int{432})
	if err != nil || res.Downloaded != 1 || s.Count(p) != 2 {
		t.Fatalf("one rejection, then the answer: %+v %v", res, err)
	}
	dir = t.TempDir()
	s.Rejected[p] = 5
	_, err = cl.FetchSGS(context.Background(), dir, day(2021, 3, 1), day(2021, 3, 1), []int{432})
	if err == nil || !strings.Contains(err.Error(), "HTML page") {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "dados/serie/bcdata.sgs.432/dados/2020-2029.json")); err == nil {
		t.Error("the page was stored as the series")
	}
}

// The stand-in answers a daily window over 10 years as the SGS does: 406
// with its message. Every window FetchSGS asks is within it (above).
func TestSGSCap(t *testing.T) {
	s, err := fetchtest.Samples()
	if err != nil {
		t.Fatal(err)
	}
	for q, want := range map[string]int{
		"formato=json&dataInicial=01/01/2016&dataFinal=02/01/2026": http.StatusNotAcceptable,
		"formato=json&dataInicial=01/01/2016&dataFinal=01/01/2026": http.StatusOK,
		"formato=json&dataInicial=01/01/2000&dataFinal=31/12/2009": http.StatusNotFound,
	} {
		w := httptest.NewRecorder()
		s.ServeHTTP(w, httptest.NewRequest("GET", "/dados/serie/bcdata.sgs.432/dados?"+q, nil))
		if w.Code != want {
			t.Errorf("%s: %d, want %d", q, w.Code, want)
		}
	}
}
