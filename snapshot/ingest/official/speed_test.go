package official_test

import (
	"os"
	"testing"
	"time"

	"github.com/pregao/pregao/snapshot/ingest/cotahist"
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
