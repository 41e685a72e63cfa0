package assemble

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestSymbolPath(t *testing.T) {
	f := func(in, sym, path string) {
		t.Helper()
		if s, p := symbolPath(in); s != sym || p != path {
			t.Errorf("symbolPath(%q) = %q, %q; want %q, %q", in, s, p, sym, path)
		}
	}
	f("IBOV=/in/portfolio.json", "IBOV", "/in/portfolio.json")
	f("abev=x.json", "ABEV", "x.json")
	f("/in/IBOVDia_26-03-21.csv", "", "/in/IBOVDia_26-03-21.csv")
	f("/in/a=b.json", "", "/in/a=b.json") // "=" inside a path
	f("./x=y", "", "./x=y")
	f("=x.json", "", "=x.json")
}

func TestExpand(t *testing.T) {
	dir := t.TempDir()
	// d: the downloads pregao fetch keeps of a republished year (the
	// earlier ones named by the time they were stored), and one cut short.
	for _, p := range []string{"a/dfp_cia_aberta_2022.zip", "a/b/dfp_cia_aberta_2021.csv.zst", "a/other.csv", "c/x.TXT.gz",
		"d/dfp_cia_aberta_2023.zip", "d/dfp_cia_aberta_2023.20261130T220619Z.zip", "d/dfp_cia_aberta_2023.20260915T080000Z.zip",
		"d/dfp_cia_aberta_2024.zip.part"} {
		p = filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if strings.HasSuffix(p, ".gz") {
			zw := gzip.NewWriter(&b)
			zw.Close()
		}
		if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	j := func(p string) string { return filepath.Join(dir, filepath.FromSlash(p)) }
	for _, c := range []struct {
		in   []string
		want []string
		err  string
	}{
		{in: []string{j("a")}, want: []string{j("a/b/dfp_cia_aberta_2021.csv.zst"), j("a/dfp_cia_aberta_2022.zip")}},
		{in: []string{j("d")}, want: []string{j("d/dfp_cia_aberta_2023.20260915T080000Z.zip"), j("d/dfp_cia_aberta_2023.20261130T220619Z.zip"),
			j("d/dfp_cia_aberta_2023.zip")}}, // in the order stored, the newest last; no partial download
		{in: []string{j("a/other.csv")}, want: []string{j("a/other.csv")}}, // a file as given, whatever its name
		{in: []string{j("c/x.TXT")}, want: []string{j("c/x.TXT")}},         // x.TXT.gz exists
		{in: []string{j("a/*.zip")}, want: []string{j("a/dfp_cia_aberta_2022.zip")}},
		{in: []string{j("a/*.rar")}, err: "no file matches"},
		{in: []string{j("c")}, err: "no input file of this kind"},
		{in: []string{j("nope.csv")}, err: "no such file"},
		{},
	} {
		got, err := expand(c.in, isDFP)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("expand(%q): error %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("expand(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

func TestInputKinds(t *testing.T) {
	for _, c := range []struct {
		kind  func(string) bool
		base  string
		wants bool
	}{
		{isCotahist, "cotahist_d26032021.txt", true},
		{isCotahist, "cotahist_a2021.zip", true},
		{isCotahist, "readme.md", false},
		{isFCA, "fca_cia_aberta_valor_mobiliario_2021.csv", true},
		{isFCA, "fca_cia_aberta_geral_2021.csv", true},
		{isFCA, "fca_cia_aberta_endereco_2021.csv", true},
		{isFCA, "fca_cia_aberta_2021.zip", true},
		{isFCA, "fca_cia_aberta_auditor_2021.csv", false},
		{isIndex, "ibovdia_26-03-21.csv", true},
		{isIndex, "getstockindex.json", true},
		{isIndex, "stockindexinfo.json", true},
		{isIndex, "getlistedcashdividends.json", false},
		{isFII, "inf_mensal_fii_geral_2021.csv", true},
		{isITR, "itr_cia_aberta_2021.zip", true},
		{isITR, "dfp_cia_aberta_2021.zip", false},
	} {
		if got := c.kind(c.base); got != c.wants {
			t.Errorf("%s: %v", c.base, got)
		}
	}
}
