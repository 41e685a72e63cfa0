package fetch

import (
	"archive/zip"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// camilBefore is the real DRE table of 2022 (CVM's dfp_cia_aberta
// download of October 2022, where Camil Alimentos' filing of 2022-02-28
// is at VERSAO 2) as a download before that restatement held it: Camil's
// rows at VERSAO 1, with another revenue (3.01) for the year. CVM's
// yearly archive holds the latest version of each filing of its day, so
// the first version is only in such an earlier download.
func camilBefore(tb testing.TB, real []byte) []byte {
	tb.Helper()
	lines := bytes.SplitAfter(real, []byte("\n"))
	n := 0
	for i, l := range lines {
		if !bytes.HasPrefix(l, []byte("64.904.295/0001-03;")) {
			continue
		}
		f := bytes.Split(l, []byte(";"))
		if string(f[2]) != "2" {
			tb.Fatalf("Camil's row at VERSAO %s, want 2: %s", f[2], l)
		}
		f[2] = []byte("1")
		if string(f[11]) == "3.01" {
			f[13] = append([]byte("1"), f[13]...) // another revenue
		}
		lines[i] = bytes.Join(f, []byte(";"))
		n++
	}
	if n == 0 {
		tb.Fatal("no row of Camil's in the sample")
	}
	return bytes.Join(lines, nil)
}

// zipAt is zipOf with the member's modification time t: CVM makes its
// archives again from the same tables, which changes their bytes and
// ETag, not their content.
func zipAt(tb testing.TB, name string, data []byte, t time.Time) []byte {
	tb.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate, Modified: t})
	if err != nil {
		tb.Fatal(err)
	}
	w.Write(data)
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// republished is a server whose DFP archive of 2022 is the download before
// Camil's restatement (v1) until the test republishes the year with it
// (v2), and the names and bytes of both.
type republished struct {
	s      *server
	cl     *Client
	items  []Item
	v1, v2 []byte
	table  string
	real   []byte
}

func newRepublished(t *testing.T) *republished {
	s, ts := newServer(t)
	real := sample(t, "cvm-dfp/dfp_cia_aberta_DRE_con_2022.csv.zst")
	const table = "dfp_cia_aberta_DRE_con_2022.csv"
	r := &republished{s: s, cl: client(ts), table: table, real: real,
		v1: zipAt(t, table, camilBefore(t, real), time.Date(2022, 9, 30, 3, 0, 0, 0, time.UTC)),
		v2: zipAt(t, table, real, time.Date(2022, 10, 17, 3, 0, 0, 0, time.UTC))}
	r.items, _ = Plan([]string{"dfp"}, day(2022, 2, 3), day(2022, 2, 3), false)
	if len(r.items) != 1 || !r.items[0].Keep {
		t.Fatalf("plan %+v: want one DFP archive to keep", r.items)
	}
	r.publish(r.v1)
	return r
}

func (r *republished) publish(b []byte) {
	r.s.mu.Lock()
	r.s.files[pDFP] = b
	r.s.mu.Unlock()
}

// fetchAt runs FetchAll into dir as at t.
func (r *republished) fetchAt(t *testing.T, dir string, at time.Time) (Result, error) {
	t.Helper()
	r.cl.Now = func() time.Time { return at }
	return r.cl.FetchAll(context.Background(), dir, r.items)
}

// downloads lists the folder's downloads of the DFP archive, in name
// order (the import's): the earlier ones kept, then the newest.
func downloads(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "dados/CIA_ABERTA/DOC/DFP/DADOS/dfp_cia_aberta_2022*"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range m {
		out = append(out, filepath.Base(p))
	}
	return out
}

func fileIs(t *testing.T, p string, want []byte) {
	t.Helper()
	got, err := os.ReadFile(p)
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("%s: %d bytes (%v), want the %d bytes served", filepath.Base(p), len(got), err, len(want))
	}
}

var (
	t1 = time.Date(2022, 9, 30, 22, 0, 0, 0, time.UTC)
	t2 = time.Date(2022, 10, 17, 22, 0, 0, 0, time.UTC)
	t3 = time.Date(2022, 10, 18, 22, 0, 0, 0, time.UTC)
)

// TestFetchKeepsRepublishedYear: CVM republishes the DFP archive of 2022
// with Camil's filing at version 2 (the real table) where the earlier
// download held version 1. The new download takes the official name,
// the earlier one is kept beside it as KeptName (its time of download)
// and sorts before it; the manifest records both. The archive made again
// from the same table (another ETag) is dropped, not kept twice; then
// the server answers 304.
func TestFetchKeepsRepublishedYear(t *testing.T) {
	r := newRepublished(t)
	dir := t.TempDir()
	dst := filepath.Join(dir, filepath.FromSlash(r.items[0].Path))
	if res, err := r.fetchAt(t, dir, t1); err != nil || res != (Result{Downloaded: 1}) {
		t.Fatalf("first download: %+v %v", res, err)
	}
	r.publish(r.v2)
	res, err := r.fetchAt(t, dir, t2)
	if err != nil || res != (Result{Downloaded: 1, Kept: 1}) {
		t.Fatalf("republished: %+v %v", res, err)
	}
	kept := KeptName(dst, t1)
	if got, want := downloads(t, dir), []string{filepath.Base(kept), "dfp_cia_aberta_2022.zip"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("downloads %q, want %q", got, want)
	}
	if filepath.Base(kept) != "dfp_cia_aberta_2022.20220930T220000Z.zip" {
		t.Errorf("kept as %s", filepath.Base(kept))
	}
	fileIs(t, kept, r.v1)
	fileIs(t, dst, r.v2)
	man, err := readManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	rel := "dados/CIA_ABERTA/DOC/DFP/DADOS/"
	if e := man[rel+filepath.Base(kept)]; e.Size != int64(len(r.v1)) || e.Fetched != "2022-09-30T22:00:00Z" || e.ETag == "" {
		t.Errorf("manifest of the kept download %+v", e)
	}
	if e := man[rel+"dfp_cia_aberta_2022.zip"]; e.Size != int64(len(r.v2)) || e.Fetched != "2022-10-17T22:00:00Z" {
		t.Errorf("manifest of the newest %+v", e)
	}
	// Made again from the same table: other bytes, same content.
	again := zipAt(t, r.table, r.real, time.Date(2022, 10, 18, 3, 0, 0, 0, time.UTC))
	if bytes.Equal(again, r.v2) {
		t.Fatal("the archive made again has the same bytes")
	}
	r.publish(again)
	if res, err := r.fetchAt(t, dir, t3); err != nil || res != (Result{Unchanged: 1}) {
		t.Errorf("made again: %+v %v", res, err)
	}
	if got := downloads(t, dir); len(got) != 2 {
		t.Errorf("downloads %q after one of the same content", got)
	}
	fileIs(t, dst, r.v2)
	if res, err := r.fetchAt(t, dir, t3); err != nil || res != (Result{Skipped: 1}) {
		t.Errorf("then: %+v %v (want a 304)", res, err)
	}
	// A download of other content again: a second kept one, in order.
	r.publish(r.v1)
	if res, err := r.fetchAt(t, dir, t3.Add(time.Hour)); err != nil || res != (Result{Downloaded: 1, Kept: 1}) {
		t.Errorf("third content: %+v %v", res, err)
	}
	if got := downloads(t, dir); len(got) != 3 || got[1] != "dfp_cia_aberta_2022.20221017T220000Z.zip" {
		t.Errorf("downloads %q", got)
	}
}

// A fetch killed between keeping the earlier download (a second name for
// it) and renaming the new one into place leaves the newest twice; one
// killed after the rename but before the manifest's write leaves a
// manifest describing the file replaced. The next fetch finds each
// download once, whole, under its name.
func TestFetchKeepKilledMidway(t *testing.T) {
	t.Run("after the link", func(t *testing.T) {
		r := newRepublished(t)
		dir := t.TempDir()
		dst := filepath.Join(dir, filepath.FromSlash(r.items[0].Path))
		if _, err := r.fetchAt(t, dir, t1); err != nil {
			t.Fatal(err)
		}
		if err := os.Link(dst, KeptName(dst, t1)); err != nil {
			t.Fatal(err)
		}
		r.publish(r.v2)
		if res, err := r.fetchAt(t, dir, t2); err != nil || res != (Result{Downloaded: 1, Kept: 1}) {
			t.Fatalf("%+v %v", res, err)
		}
		if got := downloads(t, dir); len(got) != 2 {
			t.Errorf("downloads %q", got)
		}
		fileIs(t, KeptName(dst, t1), r.v1)
		fileIs(t, dst, r.v2)
	})
	t.Run("before the manifest", func(t *testing.T) {
		r := newRepublished(t)
		dir := t.TempDir()
		dst := filepath.Join(dir, filepath.FromSlash(r.items[0].Path))
		if _, err := r.fetchAt(t, dir, t1); err != nil {
			t.Fatal(err)
		}
		if err := os.Link(dst, KeptName(dst, t1)); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst+".new", r.v2, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(dst+".new", dst); err != nil {
			t.Fatal(err)
		}
		r.publish(r.v2)
		if res, err := r.fetchAt(t, dir, t2); err != nil || res != (Result{Unchanged: 1}) {
			t.Fatalf("%+v %v", res, err)
		}
		if got := downloads(t, dir); len(got) != 2 {
			t.Errorf("downloads %q", got)
		}
		fileIs(t, dst, r.v2)
		if res, err := r.fetchAt(t, dir, t3); err != nil || res != (Result{Skipped: 1}) {
			t.Errorf("then: %+v %v (the manifest knows the file)", res, err)
		}
	})
}

// A full disk while the new download is written (writes answer ENOSPC:
// the partial file is /dev/full) fails the fetch and changes nothing: the
// earlier download stays whole under the official name, nothing is kept
// beside it. The next fetch, with room, keeps both.
func TestFetchKeepFullDisk(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("needs /dev/full")
	}
	r := newRepublished(t)
	dir := t.TempDir()
	dst := filepath.Join(dir, filepath.FromSlash(r.items[0].Path))
	if _, err := r.fetchAt(t, dir, t1); err != nil {
		t.Fatal(err)
	}
	r.publish(r.v2)
	orig := openPart
	openPart = func(string, int) (*os.File, error) { return os.OpenFile("/dev/full", os.O_WRONLY, 0) }
	r.cl.Attempts = 2
	_, err := r.fetchAt(t, dir, t2)
	openPart = orig
	if err == nil || !strings.Contains(err.Error(), "no space left") {
		t.Fatalf("full disk: %v", err)
	}
	if got := downloads(t, dir); len(got) != 1 {
		t.Errorf("downloads %q after a full disk", got)
	}
	fileIs(t, dst, r.v1)
	if res, err := r.fetchAt(t, dir, t2); err != nil || res != (Result{Downloaded: 1, Kept: 1}) {
		t.Fatalf("with room: %+v %v", res, err)
	}
	fileIs(t, KeptName(dst, t1), r.v1)
	fileIs(t, dst, r.v2)
}

// Two fetches into one folder after a republication take turns: the
// first keeps the earlier download and stores the new one, the second
// finds it complete (304). One kept download, whole.
func TestFetchKeepConcurrent(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no flock")
	}
	r := newRepublished(t)
	dir := t.TempDir()
	dst := filepath.Join(dir, filepath.FromSlash(r.items[0].Path))
	if _, err := r.fetchAt(t, dir, t1); err != nil {
		t.Fatal(err)
	}
	r.publish(r.v2)
	r.cl.Now = func() time.Time { return t2 }
	type out struct {
		res Result
		err error
	}
	done := make(chan out, 2)
	for range 2 {
		go func() {
			res, err := r.cl.FetchAll(context.Background(), dir, r.items)
			done <- out{res, err}
		}()
	}
	var total Result
	for range 2 {
		o := <-done
		if o.err != nil {
			t.Fatal(o.err)
		}
		total.Downloaded += o.res.Downloaded
		total.Kept += o.res.Kept
		total.Skipped += o.res.Skipped
	}
	if total != (Result{Downloaded: 1, Kept: 1, Skipped: 1}) {
		t.Errorf("two fetches: %+v", total)
	}
	if got := downloads(t, dir); len(got) != 2 {
		t.Errorf("downloads %q", got)
	}
	fileIs(t, KeptName(dst, t1), r.v1)
	fileIs(t, dst, r.v2)
}

// TestSameContent: two archives of the same members (names, sizes,
// CRC-32) are the same content whatever their bytes; other files are
// compared byte for byte.
func TestSameContent(t *testing.T) {
	dir := t.TempDir()
	w := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := w("a.zip", zipAt(t, "x.csv", []byte("CNPJ_CIA;VERSAO\r\n1;1\r\n"), t1))
	b := w("b.zip", zipAt(t, "x.csv", []byte("CNPJ_CIA;VERSAO\r\n1;1\r\n"), t2))
	c := w("c.zip", zipAt(t, "x.csv", []byte("CNPJ_CIA;VERSAO\r\n1;2\r\n"), t1))
	d := w("d.zip", zipAt(t, "y.csv", []byte("CNPJ_CIA;VERSAO\r\n1;1\r\n"), t1))
	e := w("e.csv", []byte("CNPJ_CIA;VERSAO\r\n1;1\r\n"))
	f := w("f.csv", []byte("CNPJ_CIA;VERSAO\r\n1;2\r\n"))
	for _, c := range []struct {
		a, b string
		want bool
	}{{a, b, true}, {a, c, false}, {a, d, false}, {a, e, false}, {e, e, true}, {e, f, false}} {
		if got, err := sameContent(c.a, c.b); err != nil || got != c.want {
			t.Errorf("%s %s: %v %v, want %v", filepath.Base(c.a), filepath.Base(c.b), got, err, c.want)
		}
	}
}
