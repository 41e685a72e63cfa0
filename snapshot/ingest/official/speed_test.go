package official_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pregao/pregao/snapshot/ingest/assemble"
	"github.com/pregao/pregao/snapshot/ingest/cotahist"
	"github.com/pregao/pregao/snapshot/ingest/official"
)

// TestCotahistSpeed imports the COTAHIST file PREGAO_OFFICIAL_COTAHIST
// names (one written by generate --official, e.g. a year of scale 10) and
// logs its lines per second; skipped without it. With go test
// -cpuprofile it shows where an import's time goes.
func TestCotahistSpeed(t *testing.T) {
	p := os.Getenv("PREGAO_OFFICIAL_COTAHIST")
	if p == "" {
		t.Skip("PREGAO_OFFICIAL_COTAHIST not set")
	}
	t0 := time.Now()
	im := cotahist.NewImporter(cotahist.Options{})
	if err := im.ImportFile(p); err != nil {
		t.Fatal(err)
	}
	res := im.Result()
	el := time.Since(t0)
	t.Logf("%s: %d lines, %d bars kept, %d tickers in %v: %.0f lines/s, %.0f MB/s",
		p, res.Stats.Lines, res.Stats.Kept, len(res.Series), el.Round(time.Millisecond),
		float64(res.Stats.Lines)/el.Seconds(), float64(res.Stats.Bytes)/1e6/el.Seconds())
}

// TestImportSpeed imports the folder PREGAO_OFFICIAL_DIR names (written
// by generate --official) as pregao update does, without writing the
// bundle, and logs the time and the rows read; skipped without it. With
// go test -cpuprofile it shows where an import's time goes.
func TestImportSpeed(t *testing.T) {
	dir := os.Getenv("PREGAO_OFFICIAL_DIR")
	if dir == "" {
		t.Skip("PREGAO_OFFICIAL_DIR not set")
	}
	ents, err := os.ReadDir(filepath.Join(dir, filepath.FromSlash(official.CashDir)))
	if err != nil {
		t.Fatal(err)
	}
	var syms []string
	for _, e := range ents {
		syms = append(syms, strings.TrimSuffix(e.Name(), ".json"))
	}
	t0 := time.Now()
	u, rep, err := assemble.Run(context.Background(), importConfig(dir, syms), nil)
	if err != nil {
		t.Fatal(err)
	}
	el := time.Since(t0)
	rows := rep.Quotes.Lines + int64(rep.CVM.Rows)
	t.Logf("%s: %d COTAHIST lines and %d CVM rows in %v: %.0f rows/s; %d reports, %d bars",
		dir, rep.Quotes.Lines, rep.CVM.Rows, el.Round(time.Millisecond), float64(rows)/el.Seconds(), len(u.Reports), rep.Quotes.Kept)
}
