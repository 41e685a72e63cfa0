package main

import (
	"bytes"
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pregao/pregao/snapshot"
	"github.com/pregao/pregao/snapshot/ingest/demo"
	"github.com/pregao/pregao/snapshot/ingest/official"
)

// pregao update --no-fetch on a folder of official files written by
// package official (what generate --official writes): officialArgs takes
// in every kind of file, B3's included (cash dividends as SYMBOL=path),
// and the snapshot serves their cash actions, share actions, indexes and
// fund reports.
func TestUpdateOfGeneratedOfficialFiles(t *testing.T) {
	sz := demo.ScaleSize(1)
	sz.Companies, sz.SponsoredBDRs, sz.UnsponsoredBDRs, sz.FIIs, sz.ETFs = 20, 2, 2, 4, 2
	sz.IntradayTickers, sz.HistoryFrom, sz.ReportsFrom, sz.FundReportsFrom, sz.EventsFrom = 0, 2024, 2025, 2025, 2025
	u := demo.GenerateSize(5, sz)
	dir := t.TempDir()
	if _, err := official.Write(dir, u, official.Options{}); err != nil {
		t.Fatal(err)
	}
	args, err := officialArgs(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"--cotahist", "--cad", "--dfp", "--itr", "--fca", "--fii", "--index", "--supplement", "--details", "--listings", "--cash-dividends"} {
		if !slices.Contains(args, f) {
			t.Errorf("officialArgs lacks %s: %v", f, args)
		}
	}
	if i := slices.Index(args, "--cash-dividends"); i >= 0 && !strings.Contains(args[i+1], "="+filepath.Join(dir, filepath.FromSlash(official.CashDir))) {
		t.Errorf("cash dividends flag %q, want SYMBOL=path", args[i+1])
	}
	out := filepath.Join(t.TempDir(), "official.snap")
	var so, se bytes.Buffer
	if err := runUpdate(context.Background(), []string{"--no-fetch", "--dir", dir, "--out", out}, &so, &se); err != nil {
		t.Fatalf("update: %v\n%s\n%s", err, so.String(), se.String())
	}
	_, h, err := snapshot.Load(out, snapshot.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"cash_actions", "share_actions", "indexes", "fund_reports", "reports", "daily_rows"} {
		if h.Counts[k] == 0 {
			t.Errorf("snapshot has no %s: %v", k, h.Counts)
		}
	}
}
