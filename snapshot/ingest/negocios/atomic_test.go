package negocios

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// The trade-file writer and the poller's state replace their files
// through temporary files a later run cleans up: one a killed writer left
// beside the file is removed by the next write, and a failing write
// leaves the file as it was and nothing beside it.
func TestWritesCleanKilledTemps(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("cannot run true:", err)
	}
	dead := strconv.Itoa(cmd.Process.Pid)
	d := day(2026, 11, 19)
	dir := t.TempDir()
	state := filepath.Join(dir, "poll.json")
	zipPath := filepath.Join(dir, ZipName(d))
	for _, p := range []string{zipPath, state} {
		stale := filepath.Join(dir, "."+filepath.Base(p)+".tmp-"+dead+"-1")
		if err := os.WriteFile(stale, []byte("half"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	rows := []Trade{{RefDate: d, TradeDate: d, Ticker: "PLAE3", Session: 1, Price: 23480, Quantity: 100, Time: at(d, 10, 0, 0, 123), ID: 10}}
	each := func(yield func(*Trade) error) error { return yield(&rows[0]) }
	if _, _, err := WriteDay(dir, d, each); err != nil {
		t.Fatal(err)
	}
	whole, _ := os.ReadFile(zipPath)
	boom := errors.New("boom")
	if _, _, err := WriteDay(dir, d, func(yield func(*Trade) error) error { yield(&rows[0]); return boom }); !errors.Is(err, boom) {
		t.Fatalf("failing write: %v", err)
	}
	if b, _ := os.ReadFile(zipPath); string(b) != string(whole) {
		t.Error("a failing WriteDay changed the archive")
	}

	s := newStandIn(t)
	s.serve(t, tickerPath+"PLAE3/2026-11-19", "PLAE3_1045.zip")
	cfg := pollConfig(s, &clock{now: time.Date(2026, 11, 19, 14, 0, 0, 0, time.UTC)}, "PLAE3")
	cfg.StatePath = state
	p, err := NewPoller(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Poll(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := p.Save(); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if len(names) != 2 || names[0] != ZipName(d) || names[1] != "poll.json" {
		t.Errorf("folder holds %q, want only the archive and the state", names)
	}
}
