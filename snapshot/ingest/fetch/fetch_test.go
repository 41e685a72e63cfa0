package fetch

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/datafile"
)

func day(y, m, d int) engine.Date { return engine.MakeDate(y, time.Month(m), d) }

func sample(tb testing.TB, rel string) []byte {
	tb.Helper()
	p, err := datafile.RealPath(rel)
	if err != nil {
		tb.Fatal(err)
	}
	b, err := datafile.ReadFile(p)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func zipOf(tb testing.TB, name string, data []byte) []byte {
	tb.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, _ := zw.Create(name)
	w.Write(data)
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// server serves files by URL path with an ETag, Range and conditional
// requests (http.ServeContent), and records the requests.
type server struct {
	files map[string][]byte
	mu    sync.Mutex
	reqs  []*http.Request
	// abort, when set for a path, makes the next answer for it stop after
	// that many bytes.
	abort map[string]int
	fail  map[string]int // answer 503 that many times
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.reqs = append(s.reqs, r.Clone(context.Background()))
	cut, doCut := s.abort[r.URL.Path]
	delete(s.abort, r.URL.Path)
	fail := s.fail[r.URL.Path]
	if fail > 0 {
		s.fail[r.URL.Path]--
	}
	b, ok := s.files[r.URL.Path]
	s.mu.Unlock()
	if fail > 0 {
		http.Error(w, "busy", http.StatusServiceUnavailable)
		return
	}
	if !ok {
		http.NotFound(w, r)
		return
	}
	sum := sha256.Sum256(b)
	w.Header().Set("ETag", `"`+hex.EncodeToString(sum[:8])+`"`)
	if doCut {
		w.Header().Set("Content-Length", strconv.Itoa(len(b)))
		w.WriteHeader(http.StatusOK)
		w.Write(b[:cut])
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	}
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(b))
}

func (s *server) count(path string) (n int, ranges []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.reqs {
		if r.URL.Path == path {
			n++
			ranges = append(ranges, r.Header.Get("Range"))
		}
	}
	return
}

const (
	pD03 = "/InstDados/SerHist/COTAHIST_D03022022.ZIP"
	pD04 = "/InstDados/SerHist/COTAHIST_D04022022.ZIP"
	pCad = "/dados/CIA_ABERTA/CAD/DADOS/cad_cia_aberta.csv"
	pDFP = "/dados/CIA_ABERTA/DOC/DFP/DADOS/dfp_cia_aberta_2022.zip"
	pFII = "/dados/FII/DOC/INF_MENSAL/DADOS/inf_mensal_fii_2022.zip"
)

var (
	filesOnce sync.Once
	files     map[string][]byte
)

// newServer serves the sample files in the official layout.
func newServer(t *testing.T) (*server, *httptest.Server) {
	t.Helper()
	filesOnce.Do(func() {
		files = map[string][]byte{
			pD03: sample(t, "b3-cotahist/gbvbahia01__Spring-Batch-Cotahist/COTAHIST_D03022022.TXT.zip"),
			pD04: sample(t, "b3-cotahist/gbvbahia01__Spring-Batch-Cotahist/COTAHIST_D04022022.TXT.zip"),
			pCad: sample(t, "cvm-cad/cad_cia_aberta.csv.zst"),
			pDFP: zipOf(t, "dfp_cia_aberta_DRE_con_2022.csv", sample(t, "cvm-dfp/dfp_cia_aberta_DRE_con_2022.csv.zst")),
			pFII: zipOf(t, "inf_mensal_fii_geral_2022.csv", sample(t, "cvm-fii/inf_mensal_fii_geral_2022.csv.zst")),
		}
	})
	s := &server{files: map[string][]byte{}, abort: map[string]int{}, fail: map[string]int{}}
	for k, v := range files {
		s.files[k] = v
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return s, ts
}

func TestPlan(t *testing.T) {
	items, err := Plan([]string{"cotahist", "cad", "dfp", "itr", "fca", "fii", "cotahist"}, day(2022, 2, 3), day(2022, 2, 7), false)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range items {
		got = append(got, it.URL)
	}
	want := []string{
		"https://bvmf.bmfbovespa.com.br/InstDados/SerHist/COTAHIST_D03022022.ZIP",
		"https://bvmf.bmfbovespa.com.br/InstDados/SerHist/COTAHIST_D04022022.ZIP",
		"https://bvmf.bmfbovespa.com.br/InstDados/SerHist/COTAHIST_D07022022.ZIP", // 5 and 6 are a weekend
		"https://dados.cvm.gov.br/dados/CIA_ABERTA/CAD/DADOS/cad_cia_aberta.csv",
		"https://dados.cvm.gov.br/dados/CIA_ABERTA/DOC/DFP/DADOS/dfp_cia_aberta_2022.zip",
		"https://dados.cvm.gov.br/dados/CIA_ABERTA/DOC/ITR/DADOS/itr_cia_aberta_2022.zip",
		"https://dados.cvm.gov.br/dados/CIA_ABERTA/DOC/FCA/DADOS/fca_cia_aberta_2022.zip",
		"https://dados.cvm.gov.br/dados/FII/DOC/INF_MENSAL/DADOS/inf_mensal_fii_2022.zip",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("plan:\n%s", strings.Join(got, "\n"))
	}
	if !items[0].Optional || !items[0].Immutable || items[3].Optional || items[3].Immutable {
		t.Errorf("flags %+v %+v", items[0], items[3])
	}
	if items[0].Path != "InstDados/SerHist/COTAHIST_D03022022.ZIP" {
		t.Errorf("path %q", items[0].Path)
	}
	items, _ = Plan([]string{"cotahist"}, day(2020, 12, 30), day(2021, 1, 4), true)
	if len(items) != 2 || !strings.HasSuffix(items[1].URL, "COTAHIST_A2021.ZIP") || !items[1].Immutable || items[1].Optional {
		t.Errorf("annual %+v", items)
	}
	if _, err := Plan([]string{"bogus"}, day(2022, 1, 1), day(2022, 1, 1), false); err == nil {
		t.Error("unknown source: no error")
	}
	if _, err := Plan([]string{"cad"}, day(2022, 1, 2), day(2022, 1, 1), false); err == nil {
		t.Error("reversed range: no error")
	}
}

func client(ts *httptest.Server) *Client {
	return &Client{BaseURL: ts.URL, Backoff: time.Millisecond, HTTP: ts.Client()}
}

// TestFetchIdempotent downloads a range, checks the files and the 404 of a
// day without a file, then runs again: nothing is downloaded, immutable
// files are not even requested, the others answer 304.
func TestFetchIdempotent(t *testing.T) {
	s, ts := newServer(t)
	dir := t.TempDir()
	items, err := Plan([]string{"cotahist", "cad", "dfp", "fii"}, day(2022, 2, 3), day(2022, 2, 7), false)
	if err != nil {
		t.Fatal(err)
	}
	res, err := client(ts).FetchAll(context.Background(), dir, items)
	if err != nil {
		t.Fatal(err)
	}
	if res != (Result{Downloaded: 5, Missing: 1}) {
		t.Errorf("first run %+v", res)
	}
	for p, want := range s.files {
		got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p[1:])))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: %d bytes, %v", p, len(got), err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "InstDados/SerHist/COTAHIST_D07022022.ZIP")); err == nil {
		t.Error("a file was written for a 404")
	}
	res, err = client(ts).FetchAll(context.Background(), dir, items)
	if err != nil {
		t.Fatal(err)
	}
	if res != (Result{Skipped: 5, Missing: 1}) {
		t.Errorf("second run %+v", res)
	}
	if n, _ := s.count(pD03); n != 1 {
		t.Errorf("immutable file requested %d times", n)
	}
	s.mu.Lock()
	var cond int
	for _, r := range s.reqs {
		if r.Header.Get("If-None-Match") != "" {
			cond++
		}
	}
	s.mu.Unlock()
	if cond != 3 {
		t.Errorf("%d conditional requests, want 3 (cad, dfp, fii)", cond)
	}
	// A file changed on the server is downloaded again.
	s.mu.Lock()
	s.files[pCad] = append([]byte("CNPJ_CIA;X\n"), s.files[pCad]...)
	s.mu.Unlock()
	res, err = client(ts).FetchAll(context.Background(), dir, items)
	if err != nil || res.Downloaded != 1 {
		t.Errorf("changed file: %+v %v", res, err)
	}
	// A complete file deleted locally is downloaded again.
	os.Remove(filepath.Join(dir, "InstDados/SerHist/COTAHIST_D04022022.ZIP"))
	res, _ = client(ts).FetchAll(context.Background(), dir, items)
	if res.Downloaded != 1 {
		t.Errorf("deleted file: %+v", res)
	}
}

// TestFetchResume cuts a download in the middle: the retry asks for the
// rest with a Range request and the file is complete.
func TestFetchResume(t *testing.T) {
	s, ts := newServer(t)
	dir := t.TempDir()
	s.abort[pD03] = 100000
	items, _ := Plan([]string{"cotahist"}, day(2022, 2, 3), day(2022, 2, 3), false)
	res, err := client(ts).FetchAll(context.Background(), dir, items)
	if err != nil {
		t.Fatal(err)
	}
	if res.Downloaded != 1 {
		t.Errorf("%+v", res)
	}
	n, ranges := s.count(pD03)
	if n != 2 || ranges[0] != "" || ranges[1] != "bytes=100000-" {
		t.Errorf("requests %d, ranges %q", n, ranges)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "InstDados/SerHist/COTAHIST_D03022022.ZIP"))
	if !bytes.Equal(got, s.files[pD03]) {
		t.Error("resumed file differs")
	}
	if _, err := os.Stat(filepath.Join(dir, "InstDados/SerHist/COTAHIST_D03022022.ZIP.part")); err == nil {
		t.Error(".part left behind")
	}
}

// TestFetchResumeAcrossRuns: a run that died leaves a .part and its
// validators in the manifest; the next run resumes it with Range and
// If-Range.
func TestFetchResumeAcrossRuns(t *testing.T) {
	s, ts := newServer(t)
	dir := t.TempDir()
	s.abort[pD04] = 5000
	items, _ := Plan([]string{"cotahist"}, day(2022, 2, 4), day(2022, 2, 4), false)
	cl := client(ts)
	cl.Attempts = 1
	if _, err := cl.FetchAll(context.Background(), dir, items); err == nil {
		t.Fatal("cut download: no error")
	}
	part := filepath.Join(dir, "InstDados/SerHist/COTAHIST_D04022022.ZIP.part")
	if fi, err := os.Stat(part); err != nil || fi.Size() != 5000 {
		t.Fatalf("part: %v", err)
	}
	if _, err := client(ts).FetchAll(context.Background(), dir, items); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	last := s.reqs[len(s.reqs)-1]
	s.mu.Unlock()
	if last.Header.Get("Range") != "bytes=5000-" || last.Header.Get("If-Range") == "" {
		t.Errorf("resume headers %v", last.Header)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "InstDados/SerHist/COTAHIST_D04022022.ZIP"))
	if !bytes.Equal(got, s.files[pD04]) {
		t.Error("resumed file differs")
	}
	// A .part without validators is not trusted: it is downloaded anew.
	os.WriteFile(filepath.Join(dir, "InstDados/SerHist/COTAHIST_D03022022.ZIP.part"), []byte("garbage"), 0o644)
	items, _ = Plan([]string{"cotahist"}, day(2022, 2, 3), day(2022, 2, 3), false)
	if _, err := client(ts).FetchAll(context.Background(), dir, items); err != nil {
		t.Fatal(err)
	}
	got, _ = os.ReadFile(filepath.Join(dir, "InstDados/SerHist/COTAHIST_D03022022.ZIP"))
	if !bytes.Equal(got, s.files[pD03]) {
		t.Error("file differs after an untrusted .part")
	}
}

func TestFetchRetryAndErrors(t *testing.T) {
	s, ts := newServer(t)
	dir := t.TempDir()
	s.fail[pCad] = 2
	items, _ := Plan([]string{"cad"}, day(2022, 2, 3), day(2022, 2, 3), false)
	res, err := client(ts).FetchAll(context.Background(), dir, items)
	if err != nil || res.Downloaded != 1 {
		t.Fatalf("%+v %v", res, err)
	}
	if n, _ := s.count(pCad); n != 3 {
		t.Errorf("%d requests, want 3", n)
	}
	// 404 on a file that must exist is an error; so is a server that
	// keeps failing.
	items, _ = Plan([]string{"itr"}, day(2022, 2, 3), day(2022, 2, 3), false)
	if _, err := client(ts).FetchAll(context.Background(), dir, items); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("404: %v", err)
	}
	s.fail[pDFP] = 10
	items, _ = Plan([]string{"dfp"}, day(2022, 2, 3), day(2022, 2, 3), false)
	cl := client(ts)
	cl.Attempts = 3
	if _, err := cl.FetchAll(context.Background(), dir, items); err == nil || !strings.Contains(err.Error(), "503") {
		t.Errorf("503: %v", err)
	}
	// A file over the size limit is refused, not retried, and not kept.
	big := client(ts)
	big.MaxFileBytes = 1000
	items, _ = Plan([]string{"cad"}, day(2022, 2, 3), day(2022, 2, 3), false)
	before, _ := s.count(pCad)
	if _, err := big.FetchAll(context.Background(), t.TempDir(), items); err == nil || !strings.Contains(err.Error(), "limit") {
		t.Errorf("over the limit: %v", err)
	}
	if n, _ := s.count(pCad); n != before+1 {
		t.Errorf("over the limit: %d requests", n-before)
	}
	if _, err := localPath(dir, "../x"); err == nil {
		t.Error("path outside the folder accepted")
	}
	os.WriteFile(filepath.Join(dir, ManifestName), []byte("{"), 0o644)
	if _, err := client(ts).FetchAll(context.Background(), dir, items); err == nil {
		t.Error("corrupt manifest: no error")
	}
}

func TestContentRange(t *testing.T) {
	for in, want := range map[string][2]int64{"bytes 100-199/200": {100, 200}, "bytes 0-9/*": {0, -1}} {
		s, tot, ok := contentRange(in)
		if !ok || s != want[0] || tot != want[1] {
			t.Errorf("%q: %d %d %v", in, s, tot, ok)
		}
	}
	for _, in := range []string{"", "bytes x-1/2", "items 1-2/3", "bytes 1-2"} {
		if _, _, ok := contentRange(in); ok {
			t.Errorf("%q accepted", in)
		}
	}
}

// TestFetchSizeLimitStreamed: an answer without a Content-Length that
// runs over the limit is cut there, refused and not kept.
func TestFetchSizeLimitStreamed(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i < 10; i++ {
			w.Write(bytes.Repeat([]byte("x"), 500))
			w.(http.Flusher).Flush()
		}
	}))
	defer ts.Close()
	dir := t.TempDir()
	cl := client(ts)
	cl.MaxFileBytes = 2000
	items, _ := Plan([]string{"cad"}, day(2022, 2, 3), day(2022, 2, 3), false)
	if _, err := cl.FetchAll(context.Background(), dir, items); err == nil || !strings.Contains(err.Error(), "limit") {
		t.Errorf("streamed over the limit: %v", err)
	}
	matches, _ := filepath.Glob(filepath.Join(dir, "dados/CIA_ABERTA/CAD/DADOS/*"))
	if len(matches) != 0 {
		t.Errorf("kept %v", matches)
	}
	cl.MaxFileBytes = 5000
	if res, err := cl.FetchAll(context.Background(), dir, items); err != nil || res.Downloaded != 1 {
		t.Errorf("at the limit: %+v %v", res, err)
	}
}

// Two fetches into one folder take turns (the folder's lock): the second
// waits while another holds it, then finds the files complete and
// downloads nothing; every file and the manifest are whole.
func TestFetchConcurrentTakeTurns(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no flock")
	}
	s, ts := newServer(t)
	dir := t.TempDir()
	items, err := Plan([]string{"cotahist", "cad", "dfp", "fii"}, day(2022, 2, 3), day(2022, 2, 7), false)
	if err != nil {
		t.Fatal(err)
	}
	unlock, err := lockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 2)
	results := make(chan Result, 2)
	for range 2 {
		go func() {
			res, err := client(ts).FetchAll(context.Background(), dir, items)
			results <- res
			done <- err
		}()
	}
	select {
	case <-done:
		t.Fatal("a fetch ran while the folder was locked")
	case <-time.After(100 * time.Millisecond):
	}
	unlock()
	var total Result
	for range 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		r := <-results
		total.Downloaded += r.Downloaded
	}
	if total.Downloaded != 5 {
		t.Errorf("%d downloads in all, want 5 (the second run finds them complete)", total.Downloaded)
	}
	for p, want := range s.files {
		got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p)))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: %d bytes, %v", p, len(got), err)
		}
	}
	man, err := readManifest(dir)
	if err != nil || len(man) != 5 {
		t.Errorf("manifest %d entries, %v", len(man), err)
	}
}
