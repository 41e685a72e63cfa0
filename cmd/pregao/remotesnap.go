// remotesnap.go owns serve's side of a remote --snapshot: the local
// copy's name in --snapshot-cache, the fetch before each (re)load with its
// deadline, and the count of failed fetches by reason. The fetch itself
// (bounds, verification, refusals) is snapshot/remote's.

package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pregao/pregao/snapshot"
	"github.com/pregao/pregao/snapshot/remote"
)

// fetchTimeout bounds one fetch of a remote snapshot (tests shorten it).
var fetchTimeout = 30 * time.Minute

// fetchRetryDelay is the first backoff of a failed fetch (then doubling,
// three retries); tests shorten it.
var fetchRetryDelay = time.Second

// localSnapshot returns the local file serve loads for cfg's --snapshot:
// the path itself, or, for a URL, the cached copy in --snapshot-cache
// (default: the user's cache folder), named after the URL.
func localSnapshot(cfg ServeConfig) (string, error) {
	if !remote.IsURL(cfg.Snapshot) {
		return cfg.Snapshot, nil
	}
	dir := cfg.SnapshotCache
	if dir == "" {
		d, err := os.UserCacheDir()
		if err != nil {
			return "", fmt.Errorf("serve: --snapshot-cache is needed for %s: %w", remote.Redact(cfg.Snapshot), err)
		}
		dir = filepath.Join(d, "pregao")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("serve: --snapshot-cache: %w", err)
	}
	sum := sha256.Sum256([]byte(cfg.Snapshot))
	base := "snapshot"
	if u, err := url.Parse(cfg.Snapshot); err == nil { // the path's last name: never the query (a presigned URL's)
		if b := path.Base(strings.TrimRight(u.Path, "/")); b != "." && b != "/" {
			base = b
		}
	}
	return filepath.Join(dir, hex.EncodeToString(sum[:6])+"-"+sanitize(base)), nil
}

// sanitize keeps the letters, digits, dots, dashes and underscores of s.
func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, s)
}

// fetchSnapshot brings the local copy of a remote snapshot up to date (a
// no-op for a local path). A failure is counted by reason (but not a
// cancel, a shutdown's), logged and returned; the local copy is kept as
// it was. Neither the log nor the error holds the location's query
// string or credentials.
func (m *Main) fetchSnapshot(ctx context.Context) error {
	if m.fetcher == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	start := time.Now()
	where := remote.Redact(m.cfg.Snapshot)
	changed, err := m.fetcher.Fetch(ctx)
	if err != nil {
		reason := remote.ReasonOf(err)
		if reason != remote.ReasonCanceled {
			m.fetchFailures.WithLabelValues(reason).Inc()
		}
		switch _, serr := os.Stat(m.snapPath); {
		case reason == remote.ReasonCanceled:
			m.log.Info("snapshot fetch stopped: shutting down", "url", where)
		case serr != nil:
			m.log.Error("snapshot fetch failed; no local copy to serve yet", "url", where, "reason", reason, "err", err.Error())
		default:
			m.log.Error("snapshot fetch failed; keeping the local copy", "url", where, "reason", reason, "err", err.Error())
		}
		return fmt.Errorf("serve: fetching %s: %w", where, err)
	}
	if changed {
		m.fetchedSig = sigOf(m.snapPath) // verified whole by the fetch
		m.log.Info("snapshot fetched", "url", where, "file", m.snapPath, "seconds", time.Since(start).Seconds())
	}
	return nil
}

// fetchProgress returns a remote.Fetcher's Progress that moves p, the
// first load's progress (/readyz's message), through a download: the
// phase "fetch" in bytes, done and to do ("fetch 45% (120.3 of 265.0
// MB)"), begun again by each attempt, then "verify download".
func fetchProgress(p *snapshot.Progress) func(done, total int64) {
	var last int64
	began := false
	return func(done, total int64) {
		if done < 0 { // whole: verified before it replaces the local copy
			p.Begin("verify download", "", 0)
			began, last = false, 0
			return
		}
		if !began || done < last {
			// The first attempt's start, or one that starts over (a
			// resumed one goes on from the bytes it holds).
			p.Begin("fetch", "bytes", max(total, 0))
			began, last = true, 0
		}
		p.Add(done - last)
		last = done
	}
}

// registerFetchFailures registers pregao_snapshot_fetch_failures_total
// on reg, every reason at 0.
func registerFetchFailures(reg prometheus.Registerer) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "pregao_snapshot_fetch_failures_total",
		Help: "Failed fetches of the remote snapshot, by reason (network, status, truncated, too_large, no_space, stalled, timeout, redirect, verify, local, config).",
	}, []string{"reason"})
	reg.MustRegister(c)
	for _, r := range remote.Reasons {
		if r != remote.ReasonCanceled {
			c.WithLabelValues(r)
		}
	}
	return c
}
