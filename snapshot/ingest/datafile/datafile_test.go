package datafile

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
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
