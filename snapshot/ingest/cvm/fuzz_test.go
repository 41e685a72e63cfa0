package cvm

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/sectors"
)

// head returns the first n lines of a real sample file.
func head(tb testing.TB, rel string, n int) []byte {
	b := readReal(tb, rel)
	i := 0
	for ; n > 0 && i < len(b); n-- {
		j := bytes.IndexByte(b[i:], '\n')
		if j < 0 {
			return b
		}
		i += j + 1
	}
	return b[:i]
}

func FuzzCSVLine(f *testing.F) {
	f.Add([]byte("A;B\n1;2\n"))
	f.Add([]byte("A;B\r\n\"a;b\";\"x\"\"y\"\r\n"))
	f.Add([]byte("A;B\n\"open\n"))
	f.Add(latin1("A;B\nSão;Açúcar\n"))
	f.Add(head(f, cadFile, 5))
	f.Add(head(f, "cvm-dfp/dfp_cia_aberta_DRE_con_2022.csv.zst", 5))
	f.Add([]byte("A;B\n\x00;2\n\"x\x00\";3\n4;5\n"))
	f.Add([]byte("A;B\x00\n1;2\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		rd := NewReader(bytes.NewReader(in), "f.csv")
		if err := rd.ReadHeader(); err != nil {
			return
		}
		for i := 0; i < 1000; i++ {
			err := rd.Next()
			if err == io.EOF {
				return
			}
			if err != nil {
				if _, ok := err.(*ParseError); !ok {
					t.Fatalf("error type %T: %v", err, err)
				}
				continue
			}
			if rd.NumFields() != len(rd.Header()) {
				t.Fatalf("row of %d fields accepted, header has %d", rd.NumFields(), len(rd.Header()))
			}
			for j := 0; j < rd.NumFields(); j++ {
				if bytes.IndexByte(rd.Field(j), 0) >= 0 {
					t.Fatalf("field %d holds a NUL byte: %q", j, rd.Field(j))
				}
			}
		}
	})
}

func FuzzParseNum(f *testing.F) {
	for _, s := range []string{"1977997.0000000000", "1.234,56", "-4E-06", "1.234.567", "", "x", "1e999", "1,234.56", "1.23,4"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseNum([]byte(s))
		if err == nil && strings.TrimSpace(s) != "" && !n.Valid() {
			t.Fatalf("%q parsed to %v", s, n)
		}
		if c := strings.IndexByte(s, ','); err == nil && c >= 0 && strings.LastIndexByte(s, '.') > c {
			t.Fatalf("%q: a '.' after the decimal comma, parsed to %v", s, n)
		}
	})
}

func FuzzParseDate(f *testing.F) {
	for _, s := range []string{"2023-03-31", "31/03/2023", "", "2023-02-29", "9999-12-31", "0000-01-01"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDate([]byte(s))
		if err != nil || !d.Valid() {
			return
		}
		back, err := ParseDate([]byte(d.String()))
		if err != nil || back != d {
			t.Fatalf("%q -> %v -> %q -> %v %v", s, d, d.String(), back, err)
		}
	})
}

func FuzzCad(f *testing.F) {
	f.Add(head(f, cadFile, 20))
	f.Add([]byte(header(f, "cad_cia_aberta")))
	if h := head(f, cadFile, 3); len(h) > 0 {
		nul := bytes.Clone(h)
		nul[bytes.LastIndexByte(nul, ';')-1] = 0
		f.Add(nul)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		for _, lenient := range []bool{false, true} {
			comps, _, err := ReadCad(bytes.NewReader(in), "f.csv", Options{Lenient: lenient})
			if err != nil {
				continue
			}
			for _, c := range comps {
				if strings.IndexByte(c.Name+c.TradingName+c.ID+c.CVMCode, 0) >= 0 {
					t.Fatalf("company with a NUL byte accepted: %+v", c)
				}
				if n, ok := sectors.Lookup(c.SubIndustryID); c.SubIndustryID != "" && (!ok || n.Level != 4) {
					t.Fatalf("sector %q not a sub-industry", c.SubIndustryID)
				}
			}
			// As of a day: never a status that began later.
			rows, err := ReadCadRows(bytes.NewReader(in), "f.csv", Options{Lenient: lenient})
			if err != nil {
				t.Fatalf("ReadCad accepted what ReadCadRows refuses: %v", err)
			}
			d := engine.MakeDate(2022, 2, 4)
			on, _, back := CompaniesOn(rows, d)
			if len(on) != len(comps) || back < 0 || back > len(on) {
				t.Fatalf("%d companies as of a day, %d without; %d taken back", len(on), len(comps), back)
			}
			for _, c := range on {
				if c.StatusDate.Valid() && c.StatusDate > d {
					t.Fatalf("%s: status %s since %v, after %v", c.ID, c.Status, c.StatusDate, d)
				}
			}
		}
	})
}

func FuzzDFP(f *testing.F) {
	f.Add(head(f, "cvm-dfp/dfp_cia_aberta_DRE_con_2022.csv.zst", 40), uint8(2))
	f.Add(head(f, "cvm-dfp/dfp_cia_aberta_BPA_con_2023.csv.zst", 40), uint8(0))
	f.Add([]byte(header(f, "dfp_cia_aberta_DMPL_con")), uint8(7))
	names := []string{"dfp_cia_aberta_BPA_con_2023.csv", "dfp_cia_aberta_BPP_ind_2023.csv", "dfp_cia_aberta_DRE_con_2022.csv",
		"itr_cia_aberta_DRA_ind_2023.csv", "itr_cia_aberta_DVA_con_2023.csv", "itr_cia_aberta_DFC_MI_con_2023.csv",
		"dfp_cia_aberta_DFC_MD_ind_2023.csv", "dfp_cia_aberta_DMPL_con_2023.csv"}
	f.Fuzz(func(t *testing.T, in []byte, which uint8) {
		name := names[int(which)%len(names)]
		for _, lenient := range []bool{false, true} {
			rs, err := ReadStatements(bytes.NewReader(in), name, Options{Lenient: lenient})
			if err != nil {
				continue
			}
			for _, r := range rs {
				seen := map[string]bool{}
				for _, a := range r.Accounts {
					if seen[a.Code()] || !ValidAccountCode(a.Code()) {
						t.Fatalf("bad account code %q", a.Code())
					}
					seen[a.Code()] = true
				}
			}
		}
	})
}

func FuzzTables(f *testing.F) {
	f.Add([]byte(indexCSV(f, "dfp")), uint8(0))
	f.Add([]byte(capitalCSV(f)), uint8(1))
	f.Add(valorMobiliarioCSV(f), uint8(2))
	f.Add(latin1(enderecoCSV(f)), uint8(3))
	f.Add([]byte(geralCSV(f)), uint8(4))
	f.Fuzz(func(t *testing.T, in []byte, which uint8) {
		opt := Options{Lenient: which&8 != 0}
		switch which % 5 {
		case 0:
			idx, err := ReadDocIndex(bytes.NewReader(in), "dfp_cia_aberta_2023.csv", opt)
			if err == nil {
				AttachIndex(readDFPOnce(t), idx)
			}
		case 1:
			_, _ = ReadCapital(bytes.NewReader(in), "c.csv", opt)
		case 2:
			ls, err := ReadValorMobiliario(bytes.NewReader(in), "v.csv", opt)
			if err == nil {
				TickerMap(ls)
				Securities(ls)
				ApplyListings(nil, ls)
			}
		case 3:
			rows, err := ReadEndereco(bytes.NewReader(in), "e.csv", opt)
			if err == nil {
				ApplyAddresses([]engine.Company{{ID: "33000167000101"}}, rows, true)
			}
		case 4:
			rows, err := ReadFCAGeral(bytes.NewReader(in), "g.csv", opt)
			if err == nil {
				ApplyGeneral([]engine.Company{{ID: "33000167000101"}}, rows)
			}
		}
	})
}

func readDFPOnce(tb testing.TB) []engine.Report {
	return readDFP(tb, "dfp_cia_aberta_BPA_con_2023.csv", Options{})
}
