package main

import (
	"bytes"
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
