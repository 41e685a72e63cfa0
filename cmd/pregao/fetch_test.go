package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pregao/pregao/snapshot/ingest/datafile"
	"github.com/pregao/pregao/snapshot/ingest/fetch/fetchtest"
)

// TestFetchCommand runs "pregao fetch" against a local server: one day
// present, one answering 404.
func TestFetchCommand(t *testing.T) {
	dir, _ := datafile.RealDir()
	zipBytes, err := os.ReadFile(filepath.Join(dir, "b3-cotahist/gbvbahia01__Spring-Batch-Cotahist/COTAHIST_D03022022.TXT.zip"))
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/InstDados/SerHist/COTAHIST_D03022022.ZIP" {
			http.NotFound(w, r)
			return
		}
		w.Write(zipBytes)
	}))
	defer ts.Close()
	out := t.TempDir()
	var so, se bytes.Buffer
	err = runFetch(context.Background(), []string{"--from", "2022-02-03", "--to", "2022-02-04", "--dir", out, "--base-url", ts.URL}, &so, &se)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(so.String(), "1 downloaded, 0 already complete, 1 absent") {
		t.Errorf("output %q", so.String())
	}
	got, err := os.ReadFile(filepath.Join(out, "InstDados/SerHist/COTAHIST_D03022022.ZIP"))
	if err != nil || !bytes.Equal(got, zipBytes) {
		t.Errorf("file: %v", err)
	}
	for _, args := range [][]string{{"--dir", out}, {"--from", "x", "--dir", out}, {"--from", "2022-02-03", "--dir", out, "--sources", "nope"}} {
		if err := runFetch(context.Background(), args, &so, &se); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}

// TestFetchCommandServices runs "pregao fetch" for B3's services against
// the local stand-in: an index portfolio, the companies of a day's quotes
// and the lists; bad index names and companies without quotes are
// errors.
func TestFetchCommandServices(t *testing.T) {
	s, err := fetchtest.Samples()
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	defer ts.Close()
	out := t.TempDir()
	var so, se bytes.Buffer
	args := []string{"--from", "2022-02-03", "--dir", out, "--base-url", ts.URL, "--pace", "0s", "--sources", "cotahist,indexes,companies,listings", "--indexes", "IBOV"}
	if err := runFetch(context.Background(), args, &so, &se); err != nil {
		t.Fatalf("%v\n%s", err, se.String())
	}
	for _, want := range []string{"fetch: 1 downloaded", "fetch: B3 services: 6 answers stored", "327 unknown to B3"} {
		if !strings.Contains(so.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, so.String())
		}
	}
	if s.Count("GetListedSupplementCompany/ABEV") != 1 || s.Count("GetListedSupplementCompany/PETR") != 1 {
		t.Error("the day's companies were not asked for")
	}
	so.Reset()
	if err := runFetch(context.Background(), args, &so, &se); err != nil || !strings.Contains(so.String(), "0 answers stored") || !strings.Contains(so.String(), " 0 requests") {
		t.Errorf("second run: %v\n%s", err, so.String())
	}
	// No dates needed for today's answers.
	so.Reset()
	if err := runFetch(context.Background(), []string{"--dir", t.TempDir(), "--base-url", ts.URL, "--pace", "0s", "--sources", "indexes,listings,companies", "--indexes", "SMLL", "--companies", "ABEV"}, &so, &se); err != nil || !strings.Contains(so.String(), "6 answers stored") {
		t.Errorf("without dates: %v\n%s", err, so.String())
	}
	for _, bad := range [][]string{
		{"--dir", out, "--sources", "indexes,companies"},
		{"--from", "2022-02-03", "--dir", out, "--base-url", ts.URL, "--sources", "indexes", "--indexes", "ibov"},
		{"--from", "2022-02-03", "--dir", out, "--base-url", ts.URL, "--sources", "indexes", "--indexes", "NOPE"},
		{"--from", "2022-02-03", "--dir", t.TempDir(), "--base-url", ts.URL, "--sources", "companies"},
		{"--from", "2022-02-03", "--dir", out, "--base-url", ts.URL, "--sources", "companies", "--companies", "ABEV3"},
	} {
		if err := runFetch(context.Background(), bad, &so, &se); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}
