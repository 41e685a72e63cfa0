package fetchtest

import (
	"encoding/json"
	"testing"
)

func TestPage(t *testing.T) {
	whole := []byte(`{"page":{"pageNumber":1,"pageSize":5,"totalRecords":5,"totalPages":1},"header":{"date":"04/07/25"},"results":[1,2,3,4,5]}`)
	for _, c := range []struct {
		n, size     int
		results     string
		total, page int
	}{
		{1, 2, "[1,2]", 5, 3},
		{3, 2, "[5]", 5, 3},
		{4, 2, "[]", 5, 3},
		{1, 9999, "[1,2,3,4,5]", 5, 1},
	} {
		b, err := Page(whole, c.n, c.size)
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			Page    struct{ PageNumber, PageSize, TotalRecords, TotalPages int }
			Header  json.RawMessage
			Results json.RawMessage
		}
		json.Unmarshal(b, &got)
		if string(got.Results) != c.results || got.Page.TotalRecords != c.total || got.Page.TotalPages != c.page || got.Page.PageNumber != c.n || string(got.Header) != `{"date":"04/07/25"}` {
			t.Errorf("page %d of %d: %s", c.n, c.size, b)
		}
	}
	if b, err := Page(nil, 1, 20); err != nil || string(b) != `{"page":{"pageNumber":1,"pageSize":20,"totalPages":0,"totalRecords":0},"results":[]}` {
		t.Errorf("unknown key: %s %v", b, err)
	}
	for _, bad := range [][2]int{{0, 20}, {1, 0}, {1, 10000}} {
		if _, err := Page(whole, bad[0], bad[1]); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}

func TestSamples(t *testing.T) {
	s, err := Samples()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"IBOV", "SMLL"} {
		var p struct{ Results []json.RawMessage }
		if err := json.Unmarshal(s.Portfolios[k], &p); err != nil || len(p.Results) < 80 {
			t.Errorf("%s: %d results, %v", k, len(p.Results), err)
		}
	}
	if len(s.Files) != 4 || len(s.SGS) != 2 || !s.SGSDaily[432] || s.Supplements["ABEV"] == nil || s.Cash["AMBEVSA"] == nil || len(s.FundLists) != 2 {
		t.Errorf("samples incomplete")
	}
	if syntheticCVM("ABEV") != "9065066069086" {
		t.Errorf("synthetic CVM code %s", syntheticCVM("ABEV"))
	}
}
