package fetch_test

import (
	"archive/zip"
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/b3"
	"github.com/pregao/pregao/snapshot/ingest/fetch"
)

// instrumentsFile is an instruments file in the official layout (its
// status line, the header's first columns and CrpnNm, two rows).
const instrumentsFile = "Status do Arquivo: Final\r\n" +
	"RptDt;TckrSymb;Asst;AsstDesc;SgmtNm;MktNm;SctyCtgyNm;ISIN;SpcfctnCd;CrpnNm;CorpGovnLvlNm\r\n" +
	"2026-11-25;BBDC4;BBDC;BBDC;CASH;EQUITY-CASH;SHARES;BRBBDCACNPR8;PN      N1;BCO BRADESCO S.A.;NIVEL 1\r\n" +
	"2026-11-25;BBDCL150;BBDC;BBDC;EQUITY CALL;EQUITY-DERIVATE;OPTION ON EQUITIES;BRBBDCACNPR8;;;\r\n"

// TestFetchInstruments asks for the instruments file of Thursday
// 2026-11-26, which B3 has not published (an empty download): the file
// of the day before is stored, whole, where pregao update finds it, and
// reads as the importer reads it. A second run the same day asks nothing;
// a 503 on the token is retried; a ZIP answer is stored unpacked; an
// answer that is not the file (an error page) fails after its retries.
func TestFetchInstruments(t *testing.T) {
	s, cl, _ := start(t)
	s.Instruments["2026-11-25"] = []byte(instrumentsFile)
	s.Fail["requestname/2026-11-25"] = 1
	dir := t.TempDir()
	svc := fetch.Services{Instruments: true, InstrumentsDay: engine.MakeDate(2026, 11, 26)}
	res, err := cl.FetchServices(context.Background(), dir, svc)
	if err != nil {
		t.Fatal(err)
	}
	if res.Downloaded != 1 || res.Missing != 1 || s.Count("requestname/2026-11-25") != 2 {
		t.Errorf("result %+v, %d token requests of the 25th", res, s.Count("requestname/2026-11-25"))
	}
	got := read(t, dir, fetch.InstrumentsDir+"/2026-11-25.csv")
	if string(got) != instrumentsFile {
		t.Errorf("stored %q", got)
	}
	ins, _, err := b3.ReadInstruments(bytes.NewReader(got), "f", false)
	if err != nil || len(ins) != 1 || ins[0].Issuer != "BCO BRADESCO S.A." {
		t.Errorf("read back: %+v, %v", ins, err)
	}
	before := s.Total()
	res, err = cl.FetchServices(context.Background(), dir, svc)
	if err != nil || s.Total() != before || res.Skipped != 2 {
		t.Errorf("second run: %+v, %v, %d requests", res, err, s.Total()-before)
	}

	// A ZIP of one member, for today (the clock's day: InstrumentsDay 0).
	var z bytes.Buffer
	zw := zip.NewWriter(&z)
	w, _ := zw.Create("InstrumentsConsolidatedFile_20261126.csv")
	w.Write([]byte(strings.ReplaceAll(instrumentsFile, "2026-11-25", "2026-11-26")))
	zw.Close()
	s.Instruments["2026-11-26"] = z.Bytes()
	dir2 := t.TempDir()
	if _, err := cl.FetchServices(context.Background(), dir2, fetch.Services{Instruments: true}); err != nil {
		t.Fatal(err)
	}
	if got := read(t, dir2, fetch.InstrumentsDir+"/2026-11-26.csv"); !strings.HasPrefix(string(got), "Status do Arquivo") {
		t.Errorf("ZIP stored as %q", got[:min(len(got), 40)])
	}

	// Not the file: retried, then an error naming the download.
	s.Instruments["2026-11-24"] = []byte("<html>busy</html>")
	_, err = cl.FetchServices(context.Background(), t.TempDir(), fetch.Services{Instruments: true, InstrumentsDay: engine.MakeDate(2026, 11, 24)})
	if err == nil || !strings.Contains(err.Error(), "no instruments header") || s.Count("download/2026-11-24") != 4 {
		t.Errorf("error page: %v after %d requests", err, s.Count("download/2026-11-24"))
	}
}
