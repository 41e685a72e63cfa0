package main

import (
	"os"
	"strings"
	"testing"
	"time"
	"weak"
)

// TestServeDefersItsLoads: serve publishes its first snapshot before the
// deferred kinds (and logs "snapshot loaded whole" once they are in), and
// so does a reload, unless PREGAO_RELOAD_DEFERRED=0. A cash route
// answers the same before and after each.
func TestServeDefersItsLoads(t *testing.T) {
	for _, deferReload := range []bool{true, false} {
		name := "reload deferred"
		if !deferReload {
			name = "reload whole"
			t.Setenv("PREGAO_RELOAD_DEFERRED", "0")
		}
		t.Run(name, func(t *testing.T) {
			snap, keys, key := serveFixture(t)
			cfg := DefaultServeConfig()
			cfg.Snapshot, cfg.Keys = snap, keys
			var logs syncBuffer
			m, stop := startServe(t, cfg, &logs)
			defer stop()
			base := "http://" + m.Addr()
			waitReady(t, base+"/readyz", waitBound)
			whole := func(n int) {
				t.Helper()
				for end := time.Now().Add(waitBound); strings.Count(logs.String(), "snapshot loaded whole") < n; time.Sleep(10 * time.Millisecond) {
					if time.Now().After(end) {
						t.Fatalf("%d deferred loads logged, want %d:\n%s", strings.Count(logs.String(), "snapshot loaded whole"), n, logs.String())
					}
				}
			}
			whole(1)
			const cash = "/v2/companies/cash-corporate-actions?limit=5"
			code, before := get(t, base+cash, key)
			if code != 200 || !strings.Contains(before, "prior_ex_date") {
				t.Fatalf("cash actions: %d %s", code, before)
			}
			if _, body := get(t, base+"/readyz", ""); strings.Contains(body, "deferred") {
				t.Fatalf("/readyz once whole: %s", body)
			}
			// The same file under a new name and inode: a reload.
			b, err := os.ReadFile(snap)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(snap+".new", b, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(snap+".new", snap); err != nil {
				t.Fatal(err)
			}
			// A deferred reload decodes its deferred kinds once the
			// replaced Dataset is gone.
			replaced := weak.Make(m.Store.Current())
			started := make(chan bool, 1)
			deferredReloadStarts = func() { started <- replaced.Value() == nil }
			defer func() { deferredReloadStarts = nil }()
			if err := m.Reload(); err != nil {
				t.Fatal(err)
			}
			if deferReload {
				if gone := <-started; !gone {
					t.Fatal("the reload's deferred kinds started while the replaced Dataset was still held")
				}
			}
			want := 1
			if deferReload {
				want = 2
			}
			whole(want)
			if code, after := get(t, base+cash, key); code != 200 || after != before {
				t.Fatalf("cash actions after the reload: %d %s\nwant %s", code, after, before)
			}
			tuning.Wait()
			if n := strings.Count(logs.String(), "snapshot loaded whole"); n != want {
				t.Fatalf("%d deferred loads logged, want %d", n, want)
			}
		})
	}
}
