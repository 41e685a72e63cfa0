package ratios

import (
	"bufio"
	"compress/gzip"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/pregao/pregao/engine"
)

// cvmReport reads the ÚLTIMO rows of a gzipped CVM DFP/ITR statement file
// (ISO-8859-1, ';') ending at the reference date into a Report. Values are
// scaled by ESCALA_MOEDA.
func cvmReport(tb testing.TB, path, statement string) engine.Report {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		tb.Fatal(err)
	}
	sc := bufio.NewScanner(zr)
	var col map[string]int
	r := engine.Report{Statement: engine.MustLabel(statement), Aggregation: engine.LabelConsolidated, Form: engine.LabelDFP, StartDate: engine.NoDate}
	for line := 1; sc.Scan(); line++ {
		// ISO-8859-1 to UTF-8: every byte is one rune.
		b := sc.Bytes()
		rs := make([]rune, len(b))
		for i, c := range b {
			rs[i] = rune(c)
		}
		fields := strings.Split(strings.TrimRight(string(rs), "\r"), ";")
		if col == nil {
			col = map[string]int{}
			for i, h := range fields {
				col[strings.TrimPrefix(h, "\ufeff")] = i
			}
			continue
		}
		get := func(name string) string {
			i, ok := col[name]
			if !ok || i >= len(fields) {
				tb.Fatalf("%s:%d: no column %s", path, line, name)
			}
			return fields[i]
		}
		if get("ORDEM_EXERC") != "ÚLTIMO" || get("DT_FIM_EXERC") != get("DT_REFER") {
			continue
		}
		r.CompanyID = get("CNPJ_CIA")
		r.ReferenceDate = day(get("DT_REFER"))
		r.EndDate = r.ReferenceDate
		if _, ok := col["DT_INI_EXERC"]; ok {
			r.StartDate = day(get("DT_INI_EXERC"))
		}
		r.Version, _ = strconv.Atoi(get("VERSAO"))
		v, err := strconv.ParseFloat(get("VL_CONTA"), 64)
		if err != nil {
			tb.Fatalf("%s:%d: %v", path, line, err)
		}
		if get("ESCALA_MOEDA") == "MIL" && !strings.HasPrefix(get("CD_CONTA"), "3.99") {
			v *= 1000
		}
		r.Accounts = append(r.Accounts, engine.NewAccount(get("CD_CONTA"), get("DS_CONTA"), get("ST_CONTA_FIXA") == "S", engine.Num(v)))
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	if len(r.Accounts) == 0 {
		tb.Fatalf("%s: no rows", path)
	}
	return r
}

// TestDeriveRealCVM derives ratios from a real DFP (the fixtures of
// engine's standardized lines, whose values engine's tests check).
func TestDeriveRealCVM(t *testing.T) {
	const dir = "../testdata/cvm/"
	bpa := cvmReport(t, dir+"dfp_cia_aberta_BPA_con_2023_jalles.csv.gz", "BPA")
	bpp := cvmReport(t, dir+"dfp_cia_aberta_BPP_con_2023_jalles.csv.gz", "BPP")
	dre := cvmReport(t, dir+"dfp_cia_aberta_DRE_con_2023_jalles.csv.gz", "DRE")
	// The same DFP through Derive: fiscal year ending in March.
	var rs []engine.Report
	for _, r := range []engine.Report{bpa, bpp, dre} {
		r.CompanyID, r.PublishDate = "JALL", engine.StampOf(at("2023-06-01"))
		r.StartDate = day("2022-04-01")
		rs = append(rs, r)
	}
	d := mustDerive(t, &engine.Universe{Companies: []engine.Company{{ID: "JALL"}}, Reports: rs})
	for _, c := range []struct {
		id, freq string
		want     float64
	}{
		{"RETURN_ON_EQUITY", engine.FreqAnnual, 692329.0 / 1937244},
		{"GROSS_MARGIN", engine.FreqAnnual, 547031.0 / 1707488},
		{"NET_DEBT", engine.FreqAnnual, (343985 + 3005099 - 999121 - 14149) * 1e3},
		{"CURRENT_RATIO", engine.FreqTTM, 2051383.0 / 830359},
		{"INTEREST_COVERAGE", engine.FreqYTD, 976633.0 / 445228},
		{"NET_REVENUE", engine.FreqYTD, 1707488e3},
	} {
		ps := pointsOf(t, d, "JALL", engine.IndFundamental, c.id, "", c.freq, "2023-03-31")
		if len(ps) != 1 || !close12(float64(ps[0].Value), c.want) {
			t.Errorf("%s %s = %+v, want %v", c.id, c.freq, ps, c.want)
		}
	}
}
