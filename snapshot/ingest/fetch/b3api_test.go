package fetch

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
)

func TestServiceURL(t *testing.T) {
	for _, c := range []struct {
		service string
		params  map[string]any
		want    string
	}{
		// The recorded requests of ropensci/rb3 tests/fixtures, with the
		// keys in sorted order.
		{SvcSupplement, map[string]any{"issuingCompany": "ABEV", "language": "pt-br"},
			B3APIHost + "/" + SvcSupplement + "/eyJpc3N1aW5nQ29tcGFueSI6IkFCRVYiLCJsYW5ndWFnZSI6InB0LWJyIn0="},
		{SvcDetail, map[string]any{"codeCVM": "24910", "language": "pt-br"},
			B3APIHost + "/" + SvcDetail + "/eyJjb2RlQ1ZNIjoiMjQ5MTAiLCJsYW5ndWFnZSI6InB0LWJyIn0="},
	} {
		if got := serviceURL(B3APIHost, c.service, c.params); got != c.want {
			t.Errorf("%v:\n got %s\nwant %s", c.params, got, c.want)
		}
	}
	// A '/' of the base64 alphabet is escaped: the parameter stays one
	// path segment.
	u := serviceURL("h", "s", map[string]any{"x": "???"})
	seg := u[strings.LastIndexByte(u, '/')+1:]
	if !strings.Contains(seg, "%2F") {
		t.Fatalf("no escaped slash in %s", u)
	}
	p, err := DecodeParam(seg)
	if err != nil || p["x"] != "???" {
		t.Errorf("round trip: %v %v", p, err)
	}
	for _, bad := range []string{"!!!", base64.StdEncoding.EncodeToString([]byte("[1]")), base64.StdEncoding.EncodeToString([]byte("null")), ""} {
		if _, err := DecodeParam(bad); err == nil {
			t.Errorf("DecodeParam(%q): no error", bad)
		}
	}
}

func TestCleanTradingName(t *testing.T) {
	for in, want := range map[string]string{
		"AMBEV S/A   ":  "AMBEVSA", // the recorded request's parameter
		"B3":            "B3",
		"Itaúsa":        "ITASA",
		"  ":            "",
		"PETROBRAS":     "PETROBRAS",
		"M.DIAS BRANCO": "MDIASBRANCO",
	} {
		if got := CleanTradingName(in); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}

func TestValidNames(t *testing.T) {
	for s, want := range map[string]bool{"IBOV": true, "ICO2": true, "I": false, "ibov": false, "IB OV": false, "ABCDEFGHIJKLM": false} {
		if ValidIndex(s) != want {
			t.Errorf("ValidIndex(%q) = %v", s, !want)
		}
	}
	for s, want := range map[string]bool{"ABEV": true, "B3SA": true, "ABE": false, "ABEV3": false, "abev": false} {
		if ValidCompany(s) != want {
			t.Errorf("ValidCompany(%q) = %v", s, !want)
		}
	}
}

func TestMergePages(t *testing.T) {
	p1, err := parsePage([]byte(`{"page":{"pageNumber":1,"pageSize":2,"totalRecords":3,"totalPages":2},"header":{"date":"04/07/25"},"results":[{"cod":"A"},{"cod":"B"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	p2, err := parsePage([]byte(`{"page":{"pageNumber":2,"pageSize":2,"totalRecords":3,"totalPages":2},"header":{"date":"04/07/25"},"results":[{"cod":"C"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := mergePages([]*page{p1, p2})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"header":{"date":"04/07/25"},"page":{"pageNumber":1,"pageSize":3,"totalRecords":3,"totalPages":1},"results":[{"cod":"A"},{"cod":"B"},{"cod":"C"}]}`
	if string(b) != want {
		t.Errorf("merged\n got %s\nwant %s", b, want)
	}
	if _, err := mergePages([]*page{p1}); err == nil || !strings.Contains(err.Error(), "totalRecords") {
		t.Errorf("missing page: %v", err)
	}
	empty, err := parsePage([]byte(`{"page":{"pageNumber":1,"pageSize":20,"totalRecords":0,"totalPages":0},"results":null}`))
	if err != nil {
		t.Fatal(err)
	}
	if b, err := mergePages([]*page{empty}); err != nil || !bytes.Contains(b, []byte(`"results":[]`)) {
		t.Errorf("empty: %s %v", b, err)
	}
	for _, bad := range []string{``, `[]`, `{}`, `{"page":1}`, `{"page":{},"results":{}}`, `{"page":{"totalPages":-1}}`} {
		if _, err := parsePage([]byte(bad)); err == nil {
			t.Errorf("parsePage(%q): no error", bad)
		}
	}
}

func TestSupplementKeys(t *testing.T) {
	for _, c := range []struct {
		in            string
		cvm, name     string
		ok, wantError bool
	}{
		{`[{"code":"ABEV","codeCVM":"23264","tradingName":"AMBEV S/A   "}]`, "23264", "AMBEV S/A", true, false},
		{``, "", "", false, false},
		{`null`, "", "", false, false},
		{` [] `, "", "", false, false},
		{`[{"code":"A"},{"code":"B"}]`, "", "", false, true},
		{`{"code":"A"}`, "", "", false, true},
		{`[{"codeCVM":"x1"}]`, "", "", false, true},
	} {
		cvm, name, ok, err := supplementKeys([]byte(c.in))
		if cvm != c.cvm || name != c.name || ok != c.ok || (err != nil) != c.wantError {
			t.Errorf("%q: %q %q %v %v", c.in, cvm, name, ok, err)
		}
	}
	for in, want := range map[string]bool{`{"cnpj":"1"}`: true, ``: false, `null`: false} {
		if ok, err := checkDetail([]byte(in)); ok != want || err != nil {
			t.Errorf("checkDetail(%q): %v %v", in, ok, err)
		}
	}
	if _, err := checkDetail([]byte(`[1]`)); err == nil {
		t.Error("checkDetail of an array: no error")
	}
}

func TestDecodeFundList(t *testing.T) {
	csv := "Raz\xe3o Social;Fundo;Segmento;C\xf3digo\r\nAF INVEST CRI;FII AFHI CRI;;AFHI;\r\n"
	b64 := base64.StdEncoding.EncodeToString([]byte(csv))
	quoted, _ := json.Marshal(b64)
	for name, in := range map[string]string{"quoted base64 (B3's answer)": string(quoted), "bare base64": b64, "plain CSV": csv, "padded": "\n " + string(quoted) + "\n"} {
		got, err := DecodeFundList([]byte(in))
		if err != nil || string(got) != strings.TrimSpace(csv) && string(got) != csv {
			t.Errorf("%s: %q %v", name, got, err)
		}
	}
	for _, bad := range []string{``, `"`, `""`, `"` + base64.StdEncoding.EncodeToString([]byte("a;b\n1;2")) + `"`, "<html>busy</html>"} {
		if _, err := DecodeFundList([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestScanCotahist(t *testing.T) {
	rec := func(ticker, market, isin string) string {
		l := []byte(strings.Repeat(" ", 245))
		copy(l, "01")
		copy(l[12:], ticker)
		copy(l[24:], market)
		copy(l[230:], isin)
		return string(l)
	}
	in := strings.Join([]string{
		"00COTAHIST.2022BOVESPA 20220203",
		rec("ABEV3", "010", "BRABEVACNOR1"),
		rec("TAEE11", "010", "BRTAEECDAM10"),
		rec("KLBN11", "010", "BRKLBNCDAM18"),
		rec("SAPR11", "010", "BRSAPRUNT001"),
		rec("XPML11", "010", "BRXPMLCTF000"),  // a fund quota
		rec("PETR4F", "020", "BRPETRACNPR6"),  // odd lot
		rec("PETRB30", "070", "BRPETRACNPR6"), // an option
		rec("abc3", "010", "BRABCDACNOR1"),
		rec("EQMA3B", "010", "BREQMAACNOR8"), // a receipt on the OTC market: not quoted
		rec("BBDC4", "010", "BRBBDCACNPR8"),
		"short line",
	}, "\r\n")
	seen := map[string]bool{}
	if err := ScanCotahist(strings.NewReader(in), seen); err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"ABEV": true, "TAEE": true, "KLBN": true, "SAPR": true, "BBDC": true}
	if len(seen) != len(want) {
		t.Errorf("codes %v", seen)
	}
	for k := range want {
		if !seen[k] {
			t.Errorf("%s missing from %v", k, seen)
		}
	}
}

func FuzzDecodeFundList(f *testing.F) {
	f.Add([]byte(`"` + base64.StdEncoding.EncodeToString([]byte("Raz\xe3o Social;C\xf3digo\nX;ABCD11\n")) + `"`))
	f.Add([]byte("Codigo;Nome\nABCD;X\n"))
	f.Add([]byte(`"QUJD"`))
	f.Fuzz(func(t *testing.T, b []byte) {
		out, err := DecodeFundList(b)
		if err == nil {
			first, _, _ := bytes.Cut(out, []byte("\n"))
			if !bytes.Contains(bytes.ToLower(first), []byte("digo")) {
				t.Fatalf("accepted a list without a header: %q", out)
			}
		}
	})
}

func FuzzPages(f *testing.F) {
	f.Add([]byte(`{"page":{"pageNumber":1,"pageSize":2,"totalRecords":2,"totalPages":1},"header":{"date":"04/07/25"},"results":[{"cod":"A"},{"cod":"B"}]}`))
	f.Add([]byte(`{"page":{"totalRecords":0},"results":null}`))
	f.Add([]byte(`{"page":{"totalRecords":1},"results":[1,2]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := parsePage(b)
		if err != nil {
			return
		}
		m, err := mergePages([]*page{p, p})
		if err != nil {
			return
		}
		q, err := parsePage(m)
		if err != nil {
			t.Fatalf("merged answer unreadable: %v\n%s", err, m)
		}
		if len(q.results) != 2*len(p.results) || q.info.TotalPages != 1 || q.info.TotalRecords != len(q.results) {
			t.Fatalf("merged %+v of %d results, from %d", q.info, len(q.results), len(p.results))
		}
	})
}

func FuzzSupplementKeys(f *testing.F) {
	f.Add([]byte(`[{"code":"ABEV","codeCVM":"23264","tradingName":"AMBEV S/A   "}]`))
	f.Add([]byte(``))
	f.Add([]byte(`[{"codeCVM":"-1"}]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		cvm, name, ok, err := supplementKeys(b)
		if err != nil && ok || !ok && (cvm != "" || name != "") {
			t.Fatalf("%q: %q %q %v %v", b, cvm, name, ok, err)
		}
		_ = CleanTradingName(name)
	})
}

func FuzzScanCotahist(f *testing.F) {
	l := []byte(strings.Repeat(" ", 245))
	copy(l, "01")
	copy(l[12:], "ABEV3")
	copy(l[24:], "010")
	copy(l[230:], "BRABEVACNOR1")
	f.Add(l)
	f.Add([]byte("00COTAHIST\n99COTAHIST"))
	f.Fuzz(func(t *testing.T, b []byte) {
		seen := map[string]bool{}
		ScanCotahist(bytes.NewReader(b), seen)
		for c := range seen {
			if !ValidCompany(c) {
				t.Fatalf("bad code %q", c)
			}
		}
	})
}

func FuzzDecodeParam(f *testing.F) {
	f.Add("eyJpc3N1aW5nQ29tcGFueSI6IkFCRVYiLCJsYW5ndWFnZSI6InB0LWJyIn0=")
	f.Add("eyJ4IjoiPz8%2FIn0=")
	f.Add("!!!")
	f.Fuzz(func(t *testing.T, seg string) {
		p, err := DecodeParam(seg)
		if err != nil {
			return
		}
		if p == nil {
			t.Fatal("nil parameters without an error")
		}
		// What decodes encodes to a URL that decodes the same.
		u := serviceURL("h", "s", p)
		q, err := DecodeParam(u[strings.LastIndexByte(u, '/')+1:])
		if err != nil || len(q) != len(p) {
			t.Fatalf("round trip of %v: %v %v", p, q, err)
		}
	})
}
