package flatfiles

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/internal/atomicfile"
	"github.com/pregao/pregao/internal/mapfile"
)

// DefaultCacheBytes is CacheConfig.MaxBytes's default: 8 GiB, about 20
// cuts of the scale-1 demo (356 MiB each, both formats).
const DefaultCacheBytes = 8 << 30

// CacheConfig configures a Cache.
type CacheConfig struct {
	// Dir is the folder of the files: one folder per snapshot and cut,
	// each an export's (required).
	Dir string
	// MaxBytes bounds the bytes of the folders kept (0:
	// DefaultCacheBytes). Past it, the least recently asked folders are
	// removed once a build ends; the one just built is always kept.
	MaxBytes int64
	// Formats are the formats written (nil: both); Datasets the datasets
	// (nil: every one).
	Formats, Datasets []string
	// Run runs a build (nil: on the goroutine the cache starts for it).
	// pregao serve runs it on a thread of the lowest priority, as a
	// reload's load, so that a build takes the cores requests leave.
	Run func(build func())
	// RetryFailed is how long a failed build's error is the answer
	// before a Get tries the build again (0: DefaultRetryFailed), so
	// that clients retrying against a full disk do not rebuild the files
	// back to back.
	RetryFailed time.Duration
	// Log, when set, is told of each build once it ends: Info for the
	// files built, Error for a failed build (once, not per Get that the
	// failure answers meanwhile).
	Log *slog.Logger
}

// DefaultRetryFailed is CacheConfig.RetryFailed's default.
const DefaultRetryFailed = time.Minute

// BuildError is Cache.Get's error for files whose build failed: the
// build's error, and when a Get may try the build again (RetryAt).
type BuildError struct {
	Err   error
	retry time.Time
}

func (e *BuildError) Error() string { return e.Err.Error() }
func (e *BuildError) Unwrap() error { return e.Err }

// RetryAt returns when a Get tries the build again.
func (e *BuildError) RetryAt() time.Time { return e.retry }

// ErrBuilding is Cache.Get's error while the files asked are being
// built (the caller's context ended first).
var ErrBuilding = errors.New("the files are being built")

// Cache builds the files of a Dataset on first demand, one folder per
// snapshot id and cut (Options.Through), at most one build at a time,
// and keeps them on disk within a bound. Folders of an earlier run are
// found again, but for those of another Version (an earlier build of
// the server), removed. Its methods are safe for concurrent use.
type Cache struct {
	cfg   CacheConfig
	mu    sync.Mutex
	sets  map[string]*cacheSet // by folder name
	clock uint64               // increases at each Get: the sets' recency
	build sync.Mutex           // one build at a time
	m     cacheMetrics
}

type cacheSet struct {
	name  string
	done  chan struct{} // closed when the build ends
	m     *Manifest     // the manifest, once built
	err   error         // the build's error
	retry time.Time     // when a failed build may be tried again
	bytes int64
	used  uint64
	built time.Time // when its manifest was written: the order of the folders of an earlier run
}

type cacheMetrics struct {
	builds    *prometheus.CounterVec
	seconds   prometheus.Counter
	bytes     prometheus.Gauge
	folders   prometheus.Gauge
	evictions prometheus.Counter
}

// NewCache returns a Cache of the folder cfg.Dir (created by the first
// build; an error when it cannot be written), with the folders it holds
// from an earlier run (those an interrupted build or removal left are
// removed), and registers its metrics on reg (nil: none):
// pregao_files_builds_total{result}, pregao_files_build_seconds_total,
// pregao_files_bytes, pregao_files_folders and
// pregao_files_evictions_total.
func NewCache(cfg CacheConfig, reg prometheus.Registerer) (*Cache, error) {
	if cfg.Dir == "" {
		return nil, errors.New("files: no folder")
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = DefaultCacheBytes
	}
	if cfg.RetryFailed <= 0 {
		cfg.RetryFailed = DefaultRetryFailed
	}
	if err := writable(cfg.Dir); err != nil {
		return nil, fmt.Errorf("files: %w", err)
	}
	c := &Cache{cfg: cfg, sets: map[string]*cacheSet{}}
	c.m = cacheMetrics{
		builds: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pregao_files_builds_total",
			Help: "Builds of a snapshot's flat files (GET /files), by result: ok or error."}, []string{"result"}),
		seconds: prometheus.NewCounter(prometheus.CounterOpts{Name: "pregao_files_build_seconds_total",
			Help: "Seconds spent building flat files."}),
		bytes: prometheus.NewGauge(prometheus.GaugeOpts{Name: "pregao_files_bytes",
			Help: "Bytes of the flat files kept on disk."}),
		folders: prometheus.NewGauge(prometheus.GaugeOpts{Name: "pregao_files_folders",
			Help: "Folders of flat files kept on disk (one per snapshot and plan cut)."}),
		evictions: prometheus.NewCounter(prometheus.CounterOpts{Name: "pregao_files_evictions_total",
			Help: "Folders of flat files removed to keep within the bound."}),
	}
	if reg != nil {
		for _, col := range []prometheus.Collector{c.m.builds, c.m.seconds, c.m.bytes, c.m.folders, c.m.evictions} {
			if err := reg.Register(col); err != nil {
				return nil, err
			}
		}
	}
	ents, err := os.ReadDir(cfg.Dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("files: %w", err)
	}
	for _, e := range ents {
		if base, pid, ok := atomicfile.TempOf(e.Name()); ok && folderName.MatchString(base) {
			// A killed build's folder. One named with this process's id
			// is an earlier process's (no build has started yet): in a
			// container the server is process 1 at every start.
			if pid == os.Getpid() {
				os.RemoveAll(filepath.Join(cfg.Dir, e.Name()))
			} else {
				atomicfile.RemoveStale(cfg.Dir, base)
			}
			continue
		}
		if !e.IsDir() || !folderName.MatchString(e.Name()) {
			continue
		}
		m, err := ReadManifest(filepath.Join(cfg.Dir, e.Name()))
		if err == nil && m.Version != Version {
			err = fmt.Errorf("files of version %d, this build writes %d", m.Version, Version)
		}
		if err == nil {
			err = checkFiles(filepath.Join(cfg.Dir, e.Name()), m)
		}
		if err != nil {
			// A build cut short by an earlier version, a removal (an
			// eviction) cut short, files removed by hand, or files an
			// earlier build of the server wrote otherwise (Version):
			// built again on demand.
			os.RemoveAll(filepath.Join(cfg.Dir, e.Name()))
			continue
		}
		s := &cacheSet{name: e.Name(), done: make(chan struct{}), m: m, bytes: manifestBytes(m)}
		if st, err := os.Stat(filepath.Join(cfg.Dir, e.Name(), ManifestName)); err == nil {
			s.built = st.ModTime()
		}
		close(s.done)
		c.sets[s.name] = s
	}
	c.mu.Lock()
	c.evict("")
	c.mu.Unlock()
	return c, nil
}

// writable returns an error when dir, or its nearest existing parent
// when it is missing (the first build creates it), cannot be written: a
// read-only file system, another owner. It leaves nothing behind.
func writable(dir string) error {
	d := filepath.Clean(dir)
	for {
		st, err := os.Stat(d)
		if err == nil && !st.IsDir() {
			return fmt.Errorf("%s is not a folder", d)
		}
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrNotExist) || filepath.Dir(d) == d {
			return err
		}
		d = filepath.Dir(d)
	}
	f, err := os.CreateTemp(d, ".pregao-probe-*")
	if err != nil {
		return err
	}
	f.Close()
	return os.Remove(f.Name())
}

// folderName is the form of a cache folder's name: the snapshot id and
// the cut ("all" or a date).
var folderName = regexp.MustCompile(`^[0-9A-Za-z_]{1,64}-(all|\d{4}-\d{2}-\d{2})$`)

var idChars = regexp.MustCompile(`[^0-9A-Za-z_]`)

// checkFiles returns an error when a file m lists is not in dir with its
// size.
func checkFiles(dir string, m *Manifest) error {
	for _, e := range m.Files {
		st, err := os.Stat(filepath.Join(dir, e.File))
		if err != nil {
			return err
		}
		if st.Size() != e.Bytes {
			return fmt.Errorf("%s: %d bytes, the manifest says %d", e.File, st.Size(), e.Bytes)
		}
	}
	return nil
}

func manifestBytes(m *Manifest) int64 {
	var n int64
	for _, e := range m.Files {
		n += e.Bytes
	}
	return n
}

// Get returns the folder and the manifest of the files of ds, the
// Dataset of the snapshot id, cut at through (NoDate: whole), building
// them when they are not on disk. It waits for the build until ctx
// ends, then returns ErrBuilding (the build goes on); a failed build is
// returned as a *BuildError until CacheConfig.RetryFailed has passed,
// then tried again by the next Get.
func (c *Cache) Get(ctx context.Context, ds *engine.Dataset, id string, through engine.Date) (string, *Manifest, error) {
	id = idChars.ReplaceAllString(id, "_")
	if len(id) > 64 {
		id = id[:64]
	}
	if id == "" {
		id = "_"
	}
	cut := "all"
	if through.Valid() {
		cut = through.String()
	}
	name := id + "-" + cut
	dir := filepath.Join(c.cfg.Dir, name)
	c.mu.Lock()
	c.clock++
	s := c.sets[name]
	switch {
	case s != nil && s.m != nil && !exists(filepath.Join(dir, ManifestName)):
		// Removed from the disk by hand since it was built: built again.
		delete(c.sets, name)
		s = nil
	case s != nil && s.err != nil && !time.Now().Before(s.retry):
		delete(c.sets, name) // a failed build, tried again
		s = nil
	}
	if s == nil {
		s = &cacheSet{name: name, done: make(chan struct{})}
		c.sets[name] = s
		go c.run(s, ds, id, through)
	}
	s.used = c.clock
	c.mu.Unlock()
	select {
	case <-s.done:
	case <-ctx.Done():
		return "", nil, ErrBuilding
	}
	if s.err != nil {
		return "", nil, &BuildError{Err: s.err, retry: s.retry}
	}
	return dir, s.m, nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// run builds s's files, then keeps the cache within its bound. The
// files are written into a temporary folder of their own, which takes
// the folder's name once complete (atomicfile.SwapDir): the folder is
// whole or absent, whether the build fails, the process is killed, or
// another process sharing the folder builds the same one meanwhile (the
// same bytes: a reader of either sees them).
func (c *Cache) run(s *cacheSet, ds *engine.Dataset, id string, through engine.Date) {
	c.build.Lock()
	defer c.build.Unlock()
	start := time.Now()
	dir := filepath.Join(c.cfg.Dir, s.name)
	var m *Manifest
	var err error
	build := func() {
		var tmp string
		defer func() {
			if err != nil && tmp != "" {
				os.RemoveAll(tmp)
			}
		}()
		// A fault reading the snapshot's mapped file (cut in place) is
		// the build's error and fails the Dataset (its requests answer
		// 503), instead of ending the process.
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		defer func() {
			mapfile.Catch(recover(), func(e error) {
				err = e
				ds.Fail(e)
			})
		}()
		if err = os.MkdirAll(c.cfg.Dir, 0o755); err != nil {
			return
		}
		atomicfile.RemoveStale(c.cfg.Dir, s.name)
		if tmp, err = os.MkdirTemp(c.cfg.Dir, atomicfile.TempPattern(s.name)); err != nil {
			return
		}
		m, err = Export(context.Background(), ds, tmp, Options{Formats: c.cfg.Formats, Datasets: c.cfg.Datasets, Through: through, Snapshot: id})
		if err == nil {
			err = atomicfile.SwapDir(tmp, dir)
		}
	}
	if c.cfg.Run != nil {
		c.cfg.Run(build)
	} else {
		build()
	}
	took := time.Since(start)
	c.m.seconds.Add(took.Seconds())
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		c.m.builds.WithLabelValues("error").Inc()
		s.err = fmt.Errorf("files: %w", err)
		s.retry = time.Now().Add(c.cfg.RetryFailed) // kept as the answer until then
		if c.cfg.Log != nil {
			c.cfg.Log.Error("files: build failed", "folder", s.name, "seconds", took.Seconds(), "retry_in", c.cfg.RetryFailed.String(), "err", s.err.Error())
		}
		close(s.done)
		return
	}
	c.m.builds.WithLabelValues("ok").Inc()
	s.m, s.bytes = m, manifestBytes(m)
	if c.cfg.Log != nil {
		c.cfg.Log.Info("files: built", "folder", s.name, "files", len(m.Files), "bytes", s.bytes, "seconds", took.Seconds())
	}
	c.evict(s.name)
	close(s.done)
}

// evict removes the least recently asked folders, not keep nor being
// built, while the bytes kept pass the bound, and updates the gauges.
// c.mu is held.
func (c *Cache) evict(keep string) {
	var total int64
	var done []*cacheSet
	for _, s := range c.sets {
		if s.m == nil {
			continue
		}
		total += s.bytes
		if s.name != keep {
			done = append(done, s)
		}
	}
	// The least recently asked first; among the folders of an earlier
	// run not asked since (used 0), the oldest built first, so that a
	// restart over the bound keeps the latest snapshot's.
	slices.SortFunc(done, func(a, b *cacheSet) int {
		if c := compareUint(a.used, b.used); c != 0 {
			return c
		}
		return a.built.Compare(b.built)
	})
	for _, s := range done {
		if total <= c.cfg.MaxBytes {
			break
		}
		// A file being sent stays readable: its folder's entry goes, the
		// open file lives until it is closed.
		os.RemoveAll(filepath.Join(c.cfg.Dir, s.name))
		delete(c.sets, s.name)
		total -= s.bytes
		c.m.evictions.Inc()
	}
	c.m.bytes.Set(float64(total))
	n := 0
	for _, s := range c.sets {
		if s.m != nil {
			n++
		}
	}
	c.m.folders.Set(float64(n))
}

func compareUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
