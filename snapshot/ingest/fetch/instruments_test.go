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

// exportFile is the daily bulletin's export of the instruments table in
// its layout (text, its day in it, Portuguese labels, "-" for none, a
// closing line), two rows.
const exportFile = "Cadastro de instrumentos listados - renda variável\r\nPosição em 25/11/2026\r\n\r\n" +
	"Instrumento financeiro;Ativo;Descrição do ativo;Segmento;Mercado;Categoria;Código ISIN;Especificação;Nome da instituição;Nível de governança corporativa\r\n" +
	"BBDC4;BBDC;BBDC;CASH;EQUITY-CASH;SHARES;BRBBDCACNPR8;PN      N1;BCO BRADESCO S.A.;NIVEL 1\r\n" +
	"BBDCL150;BBDC;BBDC;EQUITY CALL;EQUITY-DERIVATE;OPTION ON EQUITIES;BRBBDCACNPR8;-;-;-\r\n" +
	"Informamos que a tabela acima não será publicada no Boletim Completo\r\n"

// TestFetchInstruments asks for the instruments file of Thursday
// 2026-11-26, which the daily bulletin has not published (an export
// without rows): the export of the day before is stored, whole, where
// pregao update finds it, and reads as the importer reads it. A second
// run the same day asks nothing; a 503 is retried.
func TestFetchInstruments(t *testing.T) {
	s, cl, _ := start(t)
	s.Bulletin["2026-11-25"] = []byte(exportFile)
	s.Fail["bulletin/2026-11-25"] = 1
	dir := t.TempDir()
	svc := fetch.Services{Instruments: true, InstrumentsDay: engine.MakeDate(2026, 11, 26)}
	res, err := cl.FetchServices(context.Background(), dir, svc)
	if err != nil {
		t.Fatal(err)
	}
	if res.Downloaded != 1 || res.Missing != 1 || s.Count("bulletin/2026-11-25") != 2 || s.Count("requestname/2026-11-26") != 0 {
		t.Errorf("result %+v, %d requests of the 25th", res, s.Count("bulletin/2026-11-25"))
	}
	got := read(t, dir, fetch.InstrumentsDir+"/2026-11-25.csv")
	if string(got) != exportFile {
		t.Errorf("stored %q", got)
	}
	ins, _, err := b3.ReadInstruments(bytes.NewReader(got), "f", false)
	if err != nil || len(ins) != 1 || ins[0].Issuer != "BCO BRADESCO S.A." || ins[0].Day != engine.MakeDate(2026, 11, 25) {
		t.Errorf("read back: %+v, %v", ins, err)
	}
	before := s.Total()
	res, err = cl.FetchServices(context.Background(), dir, svc)
	if err != nil || s.Total() != before || res.Skipped != 2 {
		t.Errorf("second run: %+v, %v, %d requests", res, err, s.Total()-before)
	}
}

// TestFetchInstrumentsConsolidated: where the bulletin does not answer
// (404), the older two-step download is asked: a token, then the file,
// here a ZIP of one member, stored unpacked; an answer that is not the
// file (an error page) fails after its retries.
func TestFetchInstrumentsConsolidated(t *testing.T) {
	s, cl, _ := start(t)
	s.NoBulletin = true
	var z bytes.Buffer
	zw := zip.NewWriter(&z)
	w, _ := zw.Create("InstrumentsConsolidatedFile_20261126.csv")
	w.Write([]byte(strings.ReplaceAll(instrumentsFile, "2026-11-25", "2026-11-26")))
	zw.Close()
	s.Instruments["2026-11-26"] = z.Bytes()
	s.Fail["requestname/2026-11-26"] = 1
	dir := t.TempDir()
	res, err := cl.FetchServices(context.Background(), dir, fetch.Services{Instruments: true}) // the clock's day
	if err != nil {
		t.Fatal(err)
	}
	if res.Downloaded != 1 || s.Count("bulletin/2026-11-26") != 1 || s.Count("requestname/2026-11-26") != 2 {
		t.Errorf("result %+v", res)
	}
	if got := read(t, dir, fetch.InstrumentsDir+"/2026-11-26.csv"); !strings.HasPrefix(string(got), "Status do Arquivo") {
		t.Errorf("ZIP stored as %q", got[:min(len(got), 40)])
	}

	s.Instruments["2026-11-24"] = []byte("<html>busy</html>")
	_, err = cl.FetchServices(context.Background(), t.TempDir(), fetch.Services{Instruments: true, InstrumentsDay: engine.MakeDate(2026, 11, 24)})
	if err == nil || !strings.Contains(err.Error(), "no header of B3's instruments file") || s.Count("download/2026-11-24") != 4 {
		t.Errorf("error page: %v after %d requests", err, s.Count("download/2026-11-24"))
	}
}
