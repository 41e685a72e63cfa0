package engine

import (
	"encoding/json"
	"testing"
	"time"
	"unsafe"
)

func TestLabelConstants(t *testing.T) {
	want := map[Label]string{LabelNone: "", LabelBPA: "BPA", LabelBPP: "BPP", LabelDRE: "DRE", LabelDRA: "DRA", LabelDVA: "DVA",
		LabelDFCMI: "DFC_MI", LabelDFCMD: "DFC_MD", LabelIndividual: AggIndividual, LabelConsolidated: AggConsolidated, LabelDFP: "DFP", LabelITR: "ITR"}
	for l, s := range want {
		if l.String() != s {
			t.Errorf("Label %d is %q, want %q", l, l.String(), s)
		}
		if got, ok := LabelOf(s); !ok || got != l {
			t.Errorf("LabelOf(%q) = %d, %v; want %d", s, got, ok, l)
		}
	}
	a, ok := LabelOf("SOMETHING_ELSE")
	if !ok || a.String() != "SOMETHING_ELSE" {
		t.Fatalf("LabelOf of a new word: %d %v %q", a, ok, a.String())
	}
	if b, _ := LabelOf("SOMETHING_ELSE"); b != a {
		t.Fatalf("a word numbered twice: %d and %d", a, b)
	}
	if Label(255).String() != "" && Label(255) != a {
		t.Fatal("a Label beyond the words should read as empty")
	}
}

func TestLabelJSON(t *testing.T) {
	b, err := LabelDFCMD.MarshalJSON()
	if err != nil || string(b) != `"DFC_MD"` {
		t.Fatalf("MarshalJSON = %s, %v", b, err)
	}
	var l Label
	if err := l.UnmarshalJSON([]byte(`"ITR"`)); err != nil || l != LabelITR {
		t.Fatalf("UnmarshalJSON = %d, %v", l, err)
	}
}

func TestReportJSONRoundTrip(t *testing.T) {
	pub := time.Date(2024, 3, 28, 18, 0, 0, 123456789, time.UTC)
	r := Report{CompanyID: "12345678000195", Statement: LabelDRE, Aggregation: LabelConsolidated, Form: LabelITR,
		ReferenceDate: MakeDate(2023, 12, 31), StartDate: NoDate, EndDate: MakeDate(2023, 12, 31),
		PublishDate: StampOf(pub), Version: 2, Accounts: []Account{NewAccount("3.01", "Receita", true, 10)}}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"company_id":"12345678000195","statement":"DRE","aggregation":"CONSOLIDATED","form":"ITR","reference_date":"2023-12-31","start_date":null,"end_date":"2023-12-31","publish_date":"2024-03-28T18:00:00.123456789Z","retrieval_date":"0001-01-01T00:00:00Z","version":2,"accounts":[{"code":"3.01","name":"Receita","value":10,"fixed":true}],"sources":null}`
	if string(b) != want {
		t.Fatalf("got  %s\nwant %s", b, want)
	}
	var back Report
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if b2, _ := json.Marshal(back); string(b2) != want {
		t.Fatalf("round trip: %s", b2)
	}
}

// TestReportSize guards the layout: millions of reports are held.
func TestReportSize(t *testing.T) {
	if n := unsafe.Sizeof(Report{}); n > 96 {
		t.Fatalf("Report is %d bytes, want at most 96", n)
	}
	if l := SourcesOf(nil); l.All() != nil || l.Len() != 0 {
		t.Fatal("SourcesOf(nil) is not absent")
	}
	if l := SourcesOf([]Source{}); l.All() == nil || l.Len() != 0 {
		t.Fatal("SourcesOf of an empty list is not empty")
	}
}
