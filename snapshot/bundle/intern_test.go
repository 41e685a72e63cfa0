package bundle

import (
	"fmt"
	"strings"
	"testing"
	"unsafe"

	"github.com/pregao/pregao/engine"
)

func sameData(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }

func TestInterner(t *testing.T) {
	var nilT *interner
	if got := nilT.s("abc"); got != "abc" {
		t.Fatalf("nil interner: %q", got)
	}
	it := &interner{}
	a := it.s(string([]byte("1.01.02")))
	b := it.s(string([]byte("1.01.02")))
	if a != "1.01.02" || !sameData(a, b) {
		t.Fatalf("equal strings not shared: %q %q", a, b)
	}
	if it.s("") != "" {
		t.Fatal("empty string")
	}
	for i := 0; len(it.m) < maxInterned; i++ {
		it.s(fmt.Sprint("v", i))
	}
	c := string([]byte("beyond the bound"))
	if got := it.s(c); got != c || !sameData(got, c) || len(it.m) != maxInterned {
		t.Fatalf("past the bound: %q kept %d", got, len(it.m))
	}
	if got := it.sources(nil); got != nil {
		t.Fatal("nil sources became non-nil")
	}
	if got := it.sources([]engine.Source{}); got == nil || len(got) != 0 {
		t.Fatal("empty sources became nil")
	}
}

// TestReadInterns checks that Read stores repeated strings of different
// lines once and gives sources an exact capacity.
func TestReadInterns(t *testing.T) {
	line := `{"company_id":"12345678000195","statement":"DRE","aggregation":"CONSOLIDATED","form":"DFP","reference_date":"%d-12-31","start_date":"%d-01-01","end_date":"%d-12-31","version":1,"accounts":[{"code":"3.01","name":"Receita","value":1}],"sources":[{"visualization_url":"https://x.invalid/%d","name":"DFP"}]}` + "\n"
	var b strings.Builder
	for y := 2020; y < 2023; y++ {
		fmt.Fprintf(&b, line, y, y, y, y)
	}
	c := &collector{}
	rs, err := readJSONL(strings.NewReader(b.String()), FileReports, c, defReport, convReport)
	if err != nil || c.count() > 0 {
		t.Fatal(err, c.err(fileOrder))
	}
	if len(rs) != 3 {
		t.Fatalf("%d reports", len(rs))
	}
	r0 := &rs[0].v
	for _, r := range rs[1:] {
		r := &r.v
		for _, p := range [][2]string{
			{r0.CompanyID, r.CompanyID}, {r0.Statement.String(), r.Statement.String()}, {r0.Form.String(), r.Form.String()},
			{r0.Accounts[0].Code(), r.Accounts[0].Code()}, {r0.Accounts[0].Name(), r.Accounts[0].Name()},
			{r0.Sources.All()[0].Name, r.Sources.All()[0].Name},
		} {
			if p[0] != p[1] || !sameData(p[0], p[1]) {
				t.Errorf("%q not shared between reports", p[0])
			}
		}
		if cap(r.Sources.All()) != r.Sources.Len() {
			t.Errorf("sources: cap %d, len %d", cap(r.Sources.All()), r.Sources.Len())
		}
	}
}
