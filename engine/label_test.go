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

// Accounts decoded into a report whose accounts number their lines in a
// file's table are the process's: the table is dropped, and the report's
// own array is not written to (it may be a read-only mapping). Without
// accounts in the JSON, the report keeps its accounts and their table.
func TestReportJSONOverFileLines(t *testing.T) {
	fileLine := NewAccount("9.99", "Outra", false, 0).Line
	own := []Account{{Line: 0, Value: 7}} // line 0 of the file's table
	r := Report{Accounts: own, Lines: &LineTable{Lines: []Line{fileLine}}}
	in := `{"accounts":[{"code":"3.01","name":"Receita","value":10,"fixed":true}]}`
	if err := json.Unmarshal([]byte(in), &r); err != nil {
		t.Fatal(err)
	}
	if r.Lines != nil {
		t.Error("the file's line table was kept for accounts in the process's lines")
	}
	if l := r.AccountList(); l.Len() != 1 || l.At(0).Code() != "3.01" || l.At(0).Value != 10 {
		t.Errorf("accounts: %+v", r.Accounts)
	}
	if own[0].Line != 0 || own[0].Value != 7 {
		t.Errorf("the report's former array was written to: %+v", own[0])
	}
	k := Report{Accounts: own, Lines: &LineTable{Lines: []Line{fileLine}}}
	if err := json.Unmarshal([]byte(`{"version":3}`), &k); err != nil {
		t.Fatal(err)
	}
	if k.Lines == nil || k.AccountList().At(0).Code() != "9.99" || k.Version != 3 {
		t.Errorf("without accounts: lines %v, first %q, version %d", k.Lines, k.AccountList().At(0).Code(), k.Version)
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
