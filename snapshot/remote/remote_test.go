package remote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/pregao/pregao/snapshot"
)

var (
	fixtureOnce sync.Once
	fixture     []byte
)

// snapBytes returns the bytes of a snapshot of the small test bundle.
func snapBytes(t *testing.T) []byte {
	t.Helper()
	fixtureOnce.Do(func() {
		p := filepath.Join(t.TempDir(), "s.snap")
		if _, err := snapshot.BuildFromBundle("../bundle/testdata/small", p, snapshot.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		fixture, _ = os.ReadFile(p)
	})
	return fixture
}

var (
	fixture2Once sync.Once
	fixture2     []byte
)

// snapBytes2 returns the bytes of another snapshot of the small test
// bundle (another build time): a new publication, not the same bytes.
func snapBytes2(t *testing.T) []byte {
	t.Helper()
	fixture2Once.Do(func() {
		p := filepath.Join(t.TempDir(), "s.snap")
		if _, err := snapshot.BuildFromBundle("../bundle/testdata/small", p, snapshot.WriteOptions{BuildTime: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)}); err != nil {
			t.Fatal(err)
		}
		fixture2, _ = os.ReadFile(p)
	})
	if bytes.Equal(fixture2, snapBytes(t)) {
		t.Fatal("the two fixtures are the same bytes")
	}
	return fixture2
}

// origin serves a snapshot with ETags, Range and conditional requests
// (http.ServeContent), and counts what it is asked.
type origin struct {
	mu       sync.Mutex
	body     []byte
	etag     string
	requests atomic.Int64
	ranges   atomic.Int64
	full     atomic.Int64 // answers 200 (a whole body)
	cutOnce  atomic.Bool  // the next full answer stops halfway
	fail     atomic.Int64 // answer 500 this many times
	status   int          // answer this status (0: serve)
}

func (o *origin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	o.requests.Add(1)
	if r.Header.Get("Range") != "" {
		o.ranges.Add(1)
	}
	if o.fail.Load() > 0 {
		o.fail.Add(-1)
		http.Error(w, "busy", 500)
		return
	}
	if o.status != 0 {
		http.Error(w, "no", o.status)
		return
	}
	o.mu.Lock()
	body, etag := o.body, o.etag
	o.mu.Unlock()
	w.Header().Set("ETag", etag)
	if o.cutOnce.CompareAndSwap(true, false) && r.Header.Get("Range") == "" {
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(200)
		w.Write(body[:len(body)/2])
		panic(http.ErrAbortHandler) // the connection drops mid-body
	}
	rec := &statusRecorder{ResponseWriter: w}
	http.ServeContent(rec, r, "s.snap", time.Unix(0, 0), bytes.NewReader(body))
	if rec.status == 0 || rec.status == 200 {
		o.full.Add(1)
	}
}

func (o *origin) set(body []byte, etag string) {
	o.mu.Lock()
	o.body, o.etag = body, etag
	o.mu.Unlock()
}

func newFetcher(t *testing.T, o *origin) (*Fetcher, func()) {
	srv := httptest.NewServer(o)
	return &Fetcher{URL: srv.URL + "/s.snap", Path: filepath.Join(t.TempDir(), "local.snap"), RetryDelay: time.Millisecond}, srv.Close
}

func TestFetchConditional(t *testing.T) {
	o := &origin{}
	o.set(snapBytes(t), `"v1"`)
	f, stop := newFetcher(t, o)
	defer stop()
	ctx := context.Background()
	if changed, err := f.Fetch(ctx); err != nil || !changed {
		t.Fatalf("first: %v %v", changed, err)
	}
	if got, _ := os.ReadFile(f.Path); !bytes.Equal(got, snapBytes(t)) {
		t.Fatal("local copy differs")
	}
	before := o.requests.Load()
	if changed, err := f.Fetch(ctx); err != nil || changed || o.requests.Load() != before+1 {
		t.Fatalf("unchanged: %v %v, %d requests", changed, err, o.requests.Load()-before)
	}
	// A new publication: another ETag.
	o.set(snapBytes2(t), `"v2"`)
	if changed, err := f.Fetch(ctx); err != nil || !changed {
		t.Fatalf("new version: %v %v", changed, err)
	}
	// The same bytes under another ETag are no change, and the new ETag
	// is kept: the next check is a 304.
	o.set(snapBytes2(t), `"v2b"`)
	if changed, err := f.Fetch(ctx); err != nil || changed {
		t.Fatalf("same bytes, new ETag: %v %v", changed, err)
	}
	if got := readTag(f.side(".etag")); got != `"v2b"` {
		t.Errorf("ETag kept %s, want the new one", got)
	}
	if _, err := os.Stat(f.side(".part")); !os.IsNotExist(err) {
		t.Error("the download of the same bytes was kept")
	}
	before = o.requests.Load()
	if changed, err := f.Fetch(ctx); err != nil || changed || o.requests.Load() != before+1 || o.full.Load() != 3 {
		t.Fatalf("after the same bytes: %v %v, %d requests, %d full answers", changed, err, o.requests.Load()-before, o.full.Load())
	}
	// A restart (a new Fetcher) keeps the ETag of the local copy.
	f2 := &Fetcher{URL: f.URL, Path: f.Path}
	if changed, err := f2.Fetch(ctx); err != nil || changed {
		t.Fatalf("after a restart: %v %v", changed, err)
	}
}

// A format 6 file whose sections are sound but one of whose column
// blocks is damaged is refused too, and the local copy is kept: a reload
// would refuse it, and a restart must not find it in the copy's place.
func TestFetchRefusesDamagedBlock(t *testing.T) {
	p := filepath.Join(t.TempDir(), "v6.snap")
	if _, err := snapshot.BuildFromBundle("../bundle/testdata/small", p, snapshot.WriteOptions{Version: 6}); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	h, err := snapshot.ReadHeader(p)
	if err != nil || h.Columns == 0 {
		t.Fatalf("header %+v, %v: want a column area", h, err)
	}
	o := &origin{}
	o.set(good, `"v1"`)
	f, stop := newFetcher(t, o)
	defer stop()
	ctx := context.Background()
	if _, err := f.Fetch(ctx); err != nil {
		t.Fatal(err)
	}
	bad := bytes.Clone(good)
	bad[h.ColumnsOffset+h.Columns/2] ^= 0x10 // inside a block: the area is all blocks
	o.set(bad, `"v2"`)
	if changed, err := f.Fetch(ctx); !errors.Is(err, ErrVerify) || !strings.Contains(fmt.Sprint(err), "block checksum mismatch") || changed {
		t.Fatalf("damaged block: %v %v, want ErrVerify naming the block", changed, err)
	}
	if got, _ := os.ReadFile(f.Path); !bytes.Equal(got, good) {
		t.Fatal("the local copy was replaced")
	}
}

func TestFetchRefusesCorrupt(t *testing.T) {
	o := &origin{}
	o.set(snapBytes(t), `"v1"`)
	f, stop := newFetcher(t, o)
	defer stop()
	ctx := context.Background()
	if _, err := f.Fetch(ctx); err != nil {
		t.Fatal(err)
	}
	bad := bytes.Clone(snapBytes(t))
	bad[len(bad)-10] ^= 0xff // inside the last section
	o.set(bad, `"v2"`)
	if changed, err := f.Fetch(ctx); !errors.Is(err, ErrVerify) || changed {
		t.Fatalf("corrupt: %v %v", changed, err)
	}
	if got, _ := os.ReadFile(f.Path); !bytes.Equal(got, snapBytes(t)) {
		t.Fatal("the local copy was touched")
	}
	if _, err := os.Stat(f.side(".part")); !os.IsNotExist(err) {
		t.Error("the corrupt download was kept")
	}
}

func TestFetchResumes(t *testing.T) {
	o := &origin{}
	o.set(snapBytes(t), `"v1"`)
	o.cutOnce.Store(true)
	f, stop := newFetcher(t, o)
	defer stop()
	if changed, err := f.Fetch(context.Background()); err != nil || !changed {
		t.Fatalf("%v %v", changed, err)
	}
	if o.ranges.Load() != 1 {
		t.Errorf("%d range requests, want 1 (the resume)", o.ranges.Load())
	}
	if got, _ := os.ReadFile(f.Path); !bytes.Equal(got, snapBytes(t)) {
		t.Fatal("resumed copy differs")
	}
	// A part left by another version is not resumed: If-Range gets the
	// whole new file.
	o.cutOnce.Store(true)
	o.set(snapBytes2(t), `"v2"`)
	f.Retries = -1 // no retry: leave the part behind
	if _, err := f.Fetch(context.Background()); err == nil {
		t.Fatal("cut download succeeded")
	}
	f.Retries = 0
	o.set(snapBytes2(t), `"v3"`)
	if changed, err := f.Fetch(context.Background()); err != nil || !changed {
		t.Fatalf("after a version change: %v %v", changed, err)
	}
	if got, _ := os.ReadFile(f.Path); !bytes.Equal(got, snapBytes2(t)) {
		t.Fatal("copy differs")
	}
}

func TestFetchRetries(t *testing.T) {
	o := &origin{}
	o.set(snapBytes(t), `"v1"`)
	o.fail.Store(2)
	f, stop := newFetcher(t, o)
	defer stop()
	if changed, err := f.Fetch(context.Background()); err != nil || !changed || o.requests.Load() != 3 {
		t.Fatalf("%v %v after %d requests", changed, err, o.requests.Load())
	}
	o404 := &origin{status: 404}
	f2, stop2 := newFetcher(t, o404)
	defer stop2()
	if _, err := f2.Fetch(context.Background()); err == nil || o404.requests.Load() != 1 {
		t.Fatalf("404: %v after %d requests, want an error at once", err, o404.requests.Load())
	}
	if _, err := (&Fetcher{URL: "ftp://x/y", Path: f.Path}).Fetch(context.Background()); err == nil {
		t.Error("ftp accepted")
	}
}

// A resumed download that does not verify is downloaded again whole
// before the publication is refused: the bytes held before may be
// another publication's (a part left beside this one's ETag by a
// crash, or an origin that kept the ETag for new bytes), and a good
// publication refused would not be fetched again while it is served.
func TestFetchResumedDamageRefetchedWhole(t *testing.T) {
	o := &origin{}
	o.set(snapBytes(t), `"v1"`)
	f, stop := newFetcher(t, o)
	defer stop()
	ctx := context.Background()
	if _, err := f.Fetch(ctx); err != nil {
		t.Fatal(err)
	}
	// v2 is published; the part holds other bytes under v2's ETag.
	next := snapBytes2(t)
	o.set(next, `"v2"`)
	if err := os.WriteFile(f.side(".part"), bytes.Repeat([]byte{0xab}, len(next)/2), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f.side(".part.etag"), []byte(`"v2"`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ranges := o.ranges.Load()
	if changed, err := f.Fetch(ctx); err != nil || !changed {
		t.Fatalf("resumed onto another publication's bytes: %v %v, want v2 fetched", changed, err)
	}
	if o.ranges.Load() != ranges+1 {
		t.Errorf("%d range requests, want 1 (the resume)", o.ranges.Load()-ranges)
	}
	if got, _ := os.ReadFile(f.Path); !bytes.Equal(got, next) {
		t.Error("the local copy is not v2")
	}
	if _, err := os.Stat(f.side(".refused")); !os.IsNotExist(err) {
		t.Errorf("a refusal is remembered: %v", err)
	}
}

// A download that starts over (the origin answers 200 to a resume) lets
// go of the part held before the new ETag is written beside it: a crash
// between the two must not leave another publication's bytes under it.
func TestFetchRestartDropsPartFirst(t *testing.T) {
	o := &origin{}
	o.set(snapBytes(t), `"v1"`)
	o.cutOnce.Store(true)
	f, stop := newFetcher(t, o)
	defer stop()
	f.Retries = -1 // the cut leaves half of v1 in the part
	if _, err := f.Fetch(context.Background()); err == nil {
		t.Fatal("cut download succeeded")
	}
	if st, err := os.Stat(f.side(".part")); err != nil || st.Size() == 0 {
		t.Fatalf("no part left by the cut: %v", err)
	}
	o.set(snapBytes2(t), `"v2"`) // If-Range fails: a 200
	var held int64 = -1
	partTagged = func(part string) {
		held = 0
		if st, err := os.Stat(part); err == nil {
			held = st.Size()
		}
	}
	defer func() { partTagged = nil }()
	if changed, err := f.Fetch(context.Background()); err != nil || !changed {
		t.Fatalf("%v %v", changed, err)
	}
	if held != 0 {
		t.Errorf("the part held %d bytes of v1 when v2's ETag was written beside it, want none", held)
	}
}

// A download that cannot be verified for a local reason (no file
// descriptor left, an I/O error) is not a refused publication: it is
// not remembered, and the next fetch downloads it again.
func TestFetchLocalVerifyFailureNotRefused(t *testing.T) {
	o := &origin{}
	o.set(snapBytes(t), `"v1"`)
	f, stop := newFetcher(t, o)
	defer stop()
	ctx := context.Background()
	if _, err := f.Fetch(ctx); err != nil {
		t.Fatal(err)
	}
	o.set(snapBytes2(t), `"v2"`)
	verify = func(path string) error {
		return fmt.Errorf("%s: %w", path, &os.PathError{Op: "open", Path: path, Err: syscall.EMFILE})
	}
	changed, err := f.Fetch(ctx)
	verify = Verify
	if changed || err == nil || ReasonOf(err) != ReasonLocal {
		t.Errorf("verification failing for want of descriptors: %v %v, want a local failure", changed, err)
	}
	if changed, err := f.Fetch(ctx); !changed || err != nil {
		t.Fatalf("the next fetch: %v %v, want v2 fetched", changed, err)
	}
	if got, _ := os.ReadFile(f.Path); !bytes.Equal(got, snapBytes2(t)) {
		t.Error("the local copy is not v2")
	}
}
