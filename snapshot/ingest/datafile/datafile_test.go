package datafile

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

func TestOpenTransparent(t *testing.T) {
	dir := t.TempDir()
	want := []byte("00COTAHIST.2021BOVESPA 20210326\r\nline two\n")
	if err := os.WriteFile(filepath.Join(dir, "plain.txt"), want, 0o644); err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	gw := gzip.NewWriter(&gz)
	gw.Write(want)
	gw.Close()
	os.WriteFile(filepath.Join(dir, "g.txt.gz"), gz.Bytes(), 0o644)
	enc, _ := zstd.NewWriter(nil)
	os.WriteFile(filepath.Join(dir, "z.txt.zst"), enc.EncodeAll(want, nil), 0o644)
	for _, name := range []string{"plain.txt", "g.txt.gz", "z.txt.zst", "g.txt", "z.txt"} {
		got, err := ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: got %q", name, got)
		}
	}
	if _, err := Open(filepath.Join(dir, "missing.txt")); err == nil {
		t.Error("missing file: no error")
	}
	os.WriteFile(filepath.Join(dir, "bad.zst"), []byte("not zstd"), 0o644)
	if _, err := ReadFile(filepath.Join(dir, "bad.zst")); err == nil {
		t.Error("corrupt zstd: no error")
	}
}

func TestText(t *testing.T) {
	f := func(in []byte, want string) {
		t.Helper()
		if got := Text(in); got != want {
			t.Errorf("Text(%q) = %q, want %q", in, got, want)
		}
	}
	f([]byte("PETROBRAS"), "PETROBRAS")
	f([]byte("C\xf3digo;A\xe7\xe3o"), "Código;Ação")
	f([]byte("Código"), "Código")
	f(nil, "")
}

func TestBaseName(t *testing.T) {
	for in, want := range map[string]string{
		"a/COTAHIST_D26032021.TXT.zst": "COTAHIST_D26032021.TXT",
		"x.csv.gz":                     "x.csv",
		"b/COTAHIST_D03022022.TXT.zip": "COTAHIST_D03022022.TXT.zip",
	} {
		if got := BaseName(in); got != want {
			t.Errorf("BaseName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRealDir(t *testing.T) {
	p, err := RealPath("b3-proventos/ropensci__rb3/GetDetailsCompany.json")
	if err != nil {
		t.Fatal(err)
	}
	b, err := ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(`"cnpj":"07526557000100"`)) {
		t.Errorf("unexpected content %q", b[:60])
	}
}

// TestReadFileBounded: ReadFile refuses a file whose content passes
// MaxReadFile, compressed or not, having read no more than that (a
// compression bomb of a few KB would otherwise fill the memory), and
// reads one at the bound whole.
func TestReadFileBounded(t *testing.T) {
	defer func(n int64) { MaxReadFile = n }(MaxReadFile)
	MaxReadFile = 1 << 20
	dir := t.TempDir()
	write := func(name string, n int) string {
		var buf bytes.Buffer
		p := filepath.Join(dir, name)
		switch filepath.Ext(name) {
		case ".zst":
			zw, _ := zstd.NewWriter(&buf)
			zw.Write(make([]byte, n))
			zw.Close()
		case ".gz":
			gw := gzip.NewWriter(&buf)
			gw.Write(make([]byte, n))
			gw.Close()
		default:
			buf.Write(make([]byte, n))
		}
		if err := os.WriteFile(p, buf.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, name := range []string{"bomb.json.zst", "bomb.json.gz", "big.json"} {
		p := write(name, 8<<20)
		if b, err := ReadFile(p); err == nil || !strings.Contains(err.Error(), "too large") {
			t.Errorf("%s (8 MiB of content, bound 1 MiB): %d bytes, %v; want a too-large error", name, len(b), err)
		}
	}
	if b, err := ReadFile(write("edge.json.zst", 1<<20)); err != nil || len(b) != 1<<20 {
		t.Errorf("content at the bound: %d bytes, %v", len(b), err)
	}
}
