// reload.go owns the snapshot and keys files' life in serve: the first
// load, the signatures that tell a changed file (fileSig), and the
// reloads, which load what changed and refuse what does not load. Keys
// and snapshot reloads take separate locks (Main.keysMu, Main.snapMu):
// a snapshot's download or load never delays a keys reload.

package main

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"time"
	"weak"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/httpapi"
	"github.com/pregao/pregao/internal/mapfile"
	"github.com/pregao/pregao/snapshot"
	"github.com/pregao/pregao/snapshot/remote"
)

// fileSig detects a changed file: its size, modification time, inode and
// a checksum of its first 64 KiB (a snapshot's header, which names its
// sections' checksums, or a whole keys file). A file replaced with its
// size and time kept (cp -p, rsync -t) still changes the signature.
type fileSig struct {
	size     int64
	mod      time.Time
	dev, ino uint64
	head     [sha256.Size]byte
}

// sigHead is how much of a file's start fileSig checksums.
const sigHead = 64 << 10

func sigOf(path string) fileSig {
	if st, err := os.Stat(path); err != nil || !st.Mode().IsRegular() {
		return fileSig{} // never opened: a named pipe would wait for a writer
	}
	f, err := os.Open(path)
	if err != nil {
		return fileSig{}
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fileSig{}
	}
	sig := fileSig{size: st.Size(), mod: st.ModTime()}
	sig.dev, sig.ino = fileID(st)
	h := sha256.New()
	io.Copy(h, io.LimitReader(f, sigHead))
	h.Sum(sig.head[:0])
	return sig
}

// beforeFirstLoad, when set (tests), runs in loadFirst just before the
// snapshot is read.
var beforeFirstLoad func()

// deferredReloadStarts, when set (tests), is called as a reload's
// deferred kinds start to decode.
var deferredReloadStarts func()

// loadRefused, when set (tests), runs in loadSnapshot once a load has
// failed, before the refusal is recorded.
var loadRefused func()

// loadStarts, when set (tests), is called by loadSnapshot with the
// options it loads with.
var loadStarts func(snapshot.LoadOptions)

// loadFirst fetches (for a remote --snapshot) and loads the first
// snapshot, reporting its progress to /readyz. A remote snapshot whose
// fetch fails is served from the cached copy when there is one. ctx ends
// the fetch; once it is done (a shutdown), nothing is loaded.
func (m *Main) loadFirst(ctx context.Context) error {
	m.snapMu.Lock()
	defer m.snapMu.Unlock()
	if m.fetcher != nil {
		m.progress.Begin("fetch", "", 0)
		if err := m.fetchSnapshot(ctx); err != nil {
			if ctx.Err() != nil {
				return err
			}
			if _, serr := os.Stat(m.snapPath); serr != nil {
				return err // nothing to serve
			}
			m.log.Warn("serving the cached copy until a fetch succeeds", "file", m.snapPath)
		}
	}
	m.log.Info("loading the snapshot", "file", m.snapPath)
	if beforeFirstLoad != nil {
		beforeFirstLoad()
	}
	// The first snapshot is published before its deferred kinds (cash
	// actions, fund data, insider reports, documents) are decoded: the
	// routes that read them wait for them, the others answer at once.
	return m.loadSnapshot(snapshot.LoadOptions{PauseGC: true, Progress: &m.progress, Deferred: true})
}

// loadSnapshot reads, verifies and indexes the snapshot file and publishes
// it; on error the current Dataset is kept. Either way the file's
// signature taken before the load is recorded (m.snapSig): a file put in
// place during a load that failed is another file, loaded at the next
// reload. The caller holds m.snapMu.
func (m *Main) loadSnapshot(opt snapshot.LoadOptions) error {
	start := time.Now()
	sig := sigOf(m.snapPath)
	first := m.Store.Current() == nil
	// A format 6 file's bars are verified on first use and by a pass
	// after the first load (docs/snapshot-format.md), unless --verify-rate
	// 0. A reload verifies every block before it publishes, reading the
	// file: the snapshot serving keeps serving meanwhile, and a damaged
	// file is refused instead of replacing it.
	opt.LazyVerify, opt.VerifyRate = m.cfg.VerifyRateMB > 0, m.cfg.VerifyRateMB<<20
	// A file the fetcher has just verified whole (remote.Verify) is not
	// verified again before it is published: its blocks are verified on
	// use and by the pass, as a first load's.
	opt.VerifyFirst = !first && sig != m.fetchedSig
	if loadStarts != nil {
		loadStarts(opt)
	}
	path := m.snapPath
	opt.Verified = func(s engine.BlockStatus) {
		if s.Err != nil {
			m.log.Error("snapshot blocks verified: damaged, answering 503", "file", path, "blocks", s.Blocks, "bad", s.Bad, "error", s.Err, "seconds", time.Since(start).Seconds())
			return
		}
		m.log.Info("snapshot blocks verified", "file", path, "blocks", s.Blocks, "bytes", s.Bytes, "seconds", time.Since(start).Seconds())
	}
	if opt.Deferred {
		opt.DeferredDone = func(err error) {
			if err != nil {
				m.log.Error("snapshot's deferred kinds failed to load: answering 503", "file", path, "error", err, "seconds", time.Since(start).Seconds())
				return
			}
			m.log.Info("snapshot loaded whole", "file", path, "seconds", time.Since(start).Seconds())
		}
	}
	var ds *engine.Dataset
	var hdr snapshot.Header
	var err error
	load := func() {
		// A fault reading the file's mapping (the file cut in place while
		// it loads) refuses it instead of ending the process.
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		defer func() {
			mapfile.Catch(recover(), func(e error) { ds, err = nil, fmt.Errorf("%s: %w", path, e) })
		}()
		if ds, hdr, err = snapshot.Load(m.snapPath, opt); err == nil {
			if first {
				// Nothing is served yet: the quote views are made after
				// the publish, and the requests that need them wait.
				m.API.PrepareLater(ds, hdr.ID, hdr.BuildTime)
			} else {
				m.API.Prepare(ds, hdr.ID, hdr.BuildTime)
			}
		}
	}
	// A reload that defers (unless PREGAO_RELOAD_DEFERRED=0) decodes its deferred
	// kinds once the replaced snapshot is released: that snapshot's heap
	// and the deferred kinds' are never held at once.
	var released chan struct{}
	if !first && opt.Deferred {
		released = make(chan struct{})
		opt.Go = func(f func()) {
			go func() {
				<-released
				if deferredReloadStarts != nil {
					deferredReloadStarts()
				}
				f()
			}()
		}
	}
	restore := func() {}
	if m.Store.Current() != nil && m.reloadLow {
		live, _ := m.heapFigures()
		rgc, rlim := raiseGCPercent(reloadGCPercent()), limitReloadHeap(live, reloadHeadroom())
		restore = func() { rgc(); rlim() }
		if released != nil {
			// At the load's low priority too.
			opt.Go = func(f func()) {
				go func() {
					<-released
					if deferredReloadStarts != nil {
						deferredReloadStarts()
					}
					loadInBackground(f)
				}()
			}
		}
		loadInBackground(load)
	} else {
		load()
	}
	if err != nil {
		restore()
		if loadRefused != nil {
			loadRefused()
		}
		m.snapSig = sig // this file is not tried again
		return fmt.Errorf("serve: snapshot %s: %w", remote.Redact(m.cfg.Snapshot), err)
	}
	old := m.Store.Current()
	m.Store.Publish(ds)
	m.API.Published()  // the API's per-Dataset info and answer cache follow at once
	m.Live.Published() // the handover, if ds covers the live session
	// The collector is tuned to the whole Dataset: once its deferred
	// kinds, if any, are in.
	whole := func() { ds.WaitDeferred(context.Background()) }
	if old != nil && released != nil {
		gone := weak.Make(old)
		m.goTuneGC(func() {
			releaseWhenGone(gone, restore, m.releaseOld)
			close(released)
			whole()
		}, true)
	} else if old != nil {
		m.goTuneGC(func() { releaseMemory(restore, m.releaseOld) }, !m.releaseOld) // a release collects
	} else {
		m.goTuneGC(whole, true)
	}
	m.snapSig = sig
	d := time.Since(start)
	counts := make(map[string]int64, len(hdr.Counts))
	for k, v := range hdr.Counts {
		counts[k] = int64(v)
	}
	m.API.RecordLoad(httpapi.LoadInfo{ID: hdr.ID, AsOf: ds.AsOf(), Duration: d, Counts: counts, At: time.Now()})
	m.log.Info("snapshot published", "file", m.snapPath, "id", hdr.ID, "as_of", ds.AsOf(), "load_seconds", d.Seconds())
	if w := deprecatedFormat(hdr.FormatVersion); w != "" {
		m.log.Warn(w, "file", m.snapPath, "format", hdr.FormatVersion)
	}
	return nil
}

// Reload reloads what changed since it was last loaded (see fileSig): the
// keys file, the snapshot, or both; a keys change alone does not reload
// the snapshot. A snapshot or keys file that fails to load is refused: the
// previous one keeps serving, the same file is not retried, and the error
// is returned. The keys are reloaded first, whatever the snapshot's fetch
// and load then take.
func (m *Main) Reload() error {
	return errors.Join(m.reloadKeys(), m.reloadSnapshot(context.Background()))
}

// reloadKeys reloads the keys file if it changed since it was last read.
// It holds m.keysMu only: it never waits for a snapshot's fetch or load.
func (m *Main) reloadKeys() error {
	m.keysMu.Lock()
	defer m.keysMu.Unlock()
	sig := sigOf(m.cfg.Keys)
	if sig == m.keysSig {
		return nil
	}
	m.keysSig = sig
	n, err := m.API.ReloadKeys(m.cfg.Keys)
	if err != nil {
		m.log.Error("keys reload refused; keeping the previous keys", "file", m.cfg.Keys, "keys", n, "err", err.Error())
		return fmt.Errorf("keys: %w", err)
	}
	m.log.Info("keys reloaded", "file", m.cfg.Keys, "keys", n)
	return nil
}

// reloadSnapshot brings a remote snapshot's local copy up to date (a
// conditional request: one 304 when it has not changed) and loads the
// snapshot file if it changed since it was last loaded. Every failure,
// fetch or load, is counted as a refused reload, but a fetch stopped by
// ctx (a shutdown), which refuses nothing: it is not counted at all, as
// pregao_snapshot_fetch_failures_total does not count it. It holds
// m.snapMu for the fetch and the load; ctx ends the fetch (not a load
// under way).
func (m *Main) reloadSnapshot(ctx context.Context) error {
	m.snapMu.Lock()
	defer m.snapMu.Unlock()
	var errs []error
	if err := m.fetchSnapshot(ctx); err != nil {
		if remote.ReasonOf(err) != remote.ReasonCanceled {
			m.API.RecordReload(false)
		}
		errs = append(errs, err)
	}
	if sigOf(m.snapPath) != m.snapSig {
		if err := m.loadSnapshot(m.reloadOpts); err != nil {
			m.log.Error("snapshot reload refused; keeping the previous snapshot", "err", err.Error())
			m.API.RecordReload(false)
			errs = append(errs, err)
		} else {
			m.API.RecordReload(true)
		}
	}
	return errors.Join(errs...)
}

// snapshotReloads runs reloadSnapshot once for each signal on kick (a
// signal sent while one runs makes one more run) until ctx is done: the
// watch and SIGHUP hand snapshot reloads to it, so that their loop keeps
// reloading keys meanwhile.
func (m *Main) snapshotReloads(ctx context.Context, kick <-chan struct{}) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-kick:
			m.reloadSnapshot(ctx)
		}
	}
}
