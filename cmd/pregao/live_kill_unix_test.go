//go:build unix

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pregao/pregao/snapshot/ingest/live"
)

// TestLiveKill9: a server replaying the session is killed with SIGKILL
// in the middle of it. Every batch it had applied (the sequence its
// /readyz reported last) is in its session log, whose records are the
// replay's batches exactly; a torn record is cut and counted; a server
// started again on the same --live-dir restores them, goes through the
// replay's batches it already holds without applying them again, and
// ends with the full demo snapshot's session: nothing lost, no minute
// twice.
func TestLiveKill9(t *testing.T) {
	f := liveFixtureOf(t)
	liveDir := t.TempDir()
	cmd := pregaoProcess("serve", "--snapshot", f.base, "--keys", f.keys, "--addr", "127.0.0.1:0", "--access-log", "off",
		"--feed", "replay:"+f.session, "--feed-speed", "2500", "--live-dir", liveDir)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	defer func() {
		if !killed {
			cmd.Process.Kill()
			cmd.Wait()
		}
	}()
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		re := regexp.MustCompile(`on http://([0-9.:]+)/`)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
	}()
	var base string
	select {
	case a := <-addr:
		base = "http://" + a
	case <-time.After(30 * time.Second):
		t.Fatalf("no address; stderr: %s", stderr.String())
	}
	// Wait until the replay is well into the session, then kill.
	var seen uint64
	deadline := time.Now().Add(60 * time.Second)
	for seen < 60 {
		if time.Now().After(deadline) {
			t.Fatalf("the replay reached batch %d in 60 s; stderr: %s", seen, stderr.String())
		}
		resp, err := http.Get(base + "/readyz")
		if err == nil {
			var r struct {
				Live struct {
					Seq      uint64 `json:"seq"`
					Complete bool   `json:"complete"`
				} `json:"live"`
			}
			json.NewDecoder(resp.Body).Decode(&r)
			resp.Body.Close()
			if r.Live.Complete {
				t.Fatal("the replay ended before the kill: slow it down")
			}
			seen = r.Live.Seq
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	killed = true
	cmd.Wait()

	// The log holds every batch acknowledged, and they are the replay's.
	path := filepath.Join(liveDir, live.LogName(f.day))
	var logged []live.Record
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	info, err := live.ReadLog(fh, func(r *live.Record) error { logged = append(logged, *r); return nil })
	fh.Close()
	if err != nil || info.Last < seen { // a tail torn by the kill, if any, is cut below
		t.Fatalf("log after the kill: %+v, %v; /readyz had reported batch %d", info, err, seen)
	}
	rp, _ := live.NewReplay(live.ReplayConfig{Dir: f.session})
	for i := 0; i < len(logged); {
		st, err := rp.Next(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if st.Batch == nil {
			continue
		}
		if r := logged[i]; r.Seq != st.Batch.Seq || !reflect.DeepEqual(r.Bars, st.Batch.Bars) || r.Complete != st.Batch.Complete {
			t.Fatalf("logged record %d (seq %d) is not the replay's batch %d", i, r.Seq, st.Batch.Seq)
		}
		i++
	}
	// A torn record, as a kill in the middle of a write leaves one.
	fh, _ = os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	fh.WriteString(`0badc0de {"seq":` + "999999999,\"at\":1,\"bars\":[{\"t\":\"PE")
	fh.Close()

	m, stop := serveLive(t, f, f.base, func(c *ServeConfig) {
		c.Live.Feed, c.Live.FeedSpeed, c.Live.Dir = "replay:"+f.session, "max", liveDir
	})
	defer stop()
	waitComplete(t, m)
	if compareView(t, m.Store.View(), loadDataset(t, f.full), f.day, m.clock.Now().Unix(), nil) > 0 {
		t.Error("after the restart the session differs from the full snapshot's")
	}
	_, metrics := get(t, "http://"+m.Addr()+"/metrics", "")
	// The replay goes on after the last batch of the log, without
	// walking the batches it holds again.
	for _, want := range []string{
		`pregao_live_batches_total{result="redelivered"} 0`,
		`pregao_live_feed_errors_total{reason="log_cut"} 1`,
	} {
		if !strings.Contains(metrics, want+"\n") {
			t.Errorf("metrics lack %q", want)
		}
	}
	if after, err := readLog(path); err != nil || after.Cut != 0 || after.Records != int(m.Live.State().Seq) {
		t.Errorf("log at the end %+v, %v", after, err)
	}
}
