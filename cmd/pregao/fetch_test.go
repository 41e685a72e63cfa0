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
