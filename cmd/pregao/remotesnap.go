package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pregao/pregao/snapshot/remote"
)

// fetchTimeout bounds one fetch of a remote snapshot.
const fetchTimeout = 30 * time.Minute

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
			return "", fmt.Errorf("serve: --snapshot-cache is needed for %s: %w", cfg.Snapshot, err)
		}
		dir = filepath.Join(d, "pregao")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("serve: --snapshot-cache: %w", err)
	}
	sum := sha256.Sum256([]byte(cfg.Snapshot))
	base := filepath.Base(strings.TrimRight(cfg.Snapshot, "/"))
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
// no-op for a local path). A failure is logged and returned; the local
// copy is kept as it was.
func (m *Main) fetchSnapshot(ctx context.Context) error {
	if m.fetcher == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	start := time.Now()
	changed, err := m.fetcher.Fetch(ctx)
	if err != nil {
		m.log.Error("snapshot fetch failed; keeping the local copy", "url", m.cfg.Snapshot, "err", err.Error())
		return fmt.Errorf("serve: fetching %s: %w", m.cfg.Snapshot, err)
	}
	if changed {
		m.log.Info("snapshot fetched", "url", m.cfg.Snapshot, "file", m.snapPath, "seconds", time.Since(start).Seconds())
	}
	return nil
}
