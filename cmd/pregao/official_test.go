package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pregao/pregao/snapshot"
	"github.com/pregao/pregao/snapshot/ingest/assemble"
	"github.com/pregao/pregao/snapshot/ingest/demo"
	"github.com/pregao/pregao/snapshot/ingest/official"
)

// pregao update --no-fetch on a folder of official files written by
// package official (what generate --official writes): officialInputs takes
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
	in := assemble.DefaultConfig()
	if err := officialInputs(dir, &in); err != nil {
		t.Fatal(err)
	}
	for name, l := range map[string][]string{"cotahist": in.Cotahist, "dfp": in.DFP, "itr": in.ITR, "fca": in.FCA, "fii": in.FII,
		"index": in.Index, "supplement": in.Supplement, "details": in.Details, "listings": in.Listings, "cash dividends": in.Cash} {
		if len(l) == 0 {
			t.Errorf("officialInputs lacks %s: %+v", name, in)
		}
	}
	if in.Cad == "" {
		t.Errorf("officialInputs lacks the registry: %+v", in)
	}
	if len(in.Cash) > 0 && !strings.Contains(in.Cash[0], "="+filepath.Join(dir, filepath.FromSlash(official.CashDir))) {
		t.Errorf("cash dividends input %q, want SYMBOL=path", in.Cash[0])
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

// pregao update hands its folder to import as a Config, not as flags to
// parse again: a folder whose name holds a comma (which an import flag
// would split into two paths) is imported whole.
func TestUpdateFolderWithComma(t *testing.T) {
	sz := demo.ScaleSize(1)
	sz.Companies, sz.SponsoredBDRs, sz.UnsponsoredBDRs, sz.FIIs, sz.ETFs = 6, 1, 1, 2, 1
	sz.IntradayTickers, sz.HistoryFrom, sz.ReportsFrom, sz.FundReportsFrom, sz.EventsFrom = 0, 2025, 2025, 2025, 2025
	u := demo.GenerateSize(5, sz)
	dir := filepath.Join(t.TempDir(), "B3,CVM files")
	if _, err := official.Write(dir, u, official.Options{}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "comma.snap")
	var so, se bytes.Buffer
	if err := runUpdate(context.Background(), []string{"--no-fetch", "--dir", dir, "--out", out}, &so, &se); err != nil {
		t.Fatalf("update: %v\n%s\n%s", err, so.String(), se.String())
	}
	if _, h, err := snapshot.Load(out, snapshot.LoadOptions{}); err != nil || h.Counts["daily_rows"] == 0 {
		t.Fatalf("snapshot: %v, counts %v", err, h.Counts)
	}
}
