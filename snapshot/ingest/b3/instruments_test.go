package b3

import (
	"bytes"
	"strings"
	"testing"

	"github.com/pregao/pregao/engine"
)

// instrumentLine is one row in the official layout: the named fields
// given, the other columns empty.
func instrumentLine(fields map[string]string) string {
	h := strings.Split(InstrumentsHeader, ";")
	f := make([]string, len(h))
	for i, c := range h {
		f[i] = fields[c]
	}
	return strings.Join(f, ";") + "\r\n"
}

// share is the row of a share of the cash market's regular lot.
func share(day, ticker, isin, cat, spec, issuer, gov string) string {
	return instrumentLine(map[string]string{"RptDt": day, "TckrSymb": ticker, "Asst": ticker[:4], "AsstDesc": ticker[:4],
		"SgmtNm": "CASH", "MktNm": "EQUITY-CASH", "SctyCtgyNm": cat, "ISIN": isin, "CFICd": "ESVUFR", "AllcnRndLot": "100",
		"TradgCcy": "BRL", "SpcfctnCd": spec, "CrpnNm": issuer, "CorpGovnLvlNm": gov})
}

func TestReadInstruments(t *testing.T) {
	in := "Status do Arquivo: Final\r\n" + InstrumentsHeader + "\r\n" +
		share("2024-05-27", "BBDC4", "BRBBDCACNPR8", "SHARES", "PN      N1", "BCO BRADESCO S.A.", "NIVEL 1") +
		// The odd lot and an option on the same share: not the cash market's regular lot.
		instrumentLine(map[string]string{"RptDt": "2024-05-27", "TckrSymb": "BBDC4F", "SgmtNm": "ODD LOT", "MktNm": "EQUITY-CASH",
			"SctyCtgyNm": "SHARES", "ISIN": "BRBBDCACNPR8", "CrpnNm": "BCO BRADESCO S.A."}) +
		instrumentLine(map[string]string{"RptDt": "2024-05-27", "TckrSymb": "BBDCF150", "SgmtNm": "EQUITY CALL", "MktNm": "EQUITY-DERIVATE",
			"SctyCtgyNm": "OPTION ON EQUITIES", "ISIN": "BRBBDCACNPR8"}) +
		share("2024-05-27", "SANB11", "BRSANBCDAM13", "UNIT", "UNT", "BCO SANTANDER (BRASIL) S.A.", "") +
		share("2024-05-27", "BOVA11", "BRBOVACTF003", "ETF EQUITIES", "CI", "ISHARES IBOVESPA FUNDO DE ÍNDICE", "") +
		share("2024-05-27", "BAD-1", "BRXXXXACNOR0", "SHARES", "ON", "X S.A.", "") +
		"\r\n"
	got, st, err := ReadInstruments(strings.NewReader(in), "i.csv", false)
	if err != nil {
		t.Fatal(err)
	}
	d := engine.MakeDate(2024, 5, 27)
	want := []Instrument{
		{Day: d, Ticker: "BBDC4", ISIN: "BRBBDCACNPR8", Category: "SHARES", Spec: "PN N1", Issuer: "BCO BRADESCO S.A.", Governance: "NIVEL 1"},
		{Day: d, Ticker: "SANB11", ISIN: "BRSANBCDAM13", Category: "UNIT", Spec: "UNT", Issuer: "BCO SANTANDER (BRASIL) S.A."},
		{Day: d, Ticker: "BOVA11", ISIN: "BRBOVACTF003", Category: "ETF EQUITIES", Spec: "CI", Issuer: "ISHARES IBOVESPA FUNDO DE ÍNDICE"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d instruments, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("row %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	if st != (InstrumentStats{Rows: 6, Other: 2, BadTicker: 1}) {
		t.Errorf("stats %+v", st)
	}

	// ISO-8859-1 and LF, no status line, an extract with fewer columns.
	latin := "RptDt;TckrSymb;SgmtNm;MktNm;SctyCtgyNm;ISIN;CrpnNm\n2021-03-26;PCAR3;CASH;EQUITY-CASH;SHARES;BRPCARACNOR3;CIA BRASILEIRA DE DISTRIBUI\xc7\xc3O\n"
	got, _, err = ReadInstruments(strings.NewReader(latin), "l.csv", false)
	if err != nil || len(got) != 1 || got[0].Issuer != "CIA BRASILEIRA DE DISTRIBUIÇÃO" {
		t.Fatalf("Latin-1 extract: %+v, %v", got, err)
	}
}

func TestReadInstrumentsErrors(t *testing.T) {
	row := share("2024-05-27", "BBDC4", "BRBBDCACNPR8", "SHARES", "PN", "BCO BRADESCO S.A.", "")
	for _, c := range []struct{ name, in, want string }{
		{"empty", "", "no header of B3's instruments file"},
		{"only the status line", "Status do Arquivo: Parcial\n", "no header of B3's instruments file"},
		{"another file", "CNPJ_CIA;DENOM_SOCIAL\n", "no header of B3's instruments file"},
		{"a long preamble", strings.Repeat("text\n", 20) + InstrumentsHeader + "\n", "in the first 20 lines"},
		{"no issuer column", "RptDt;TckrSymb;SgmtNm;MktNm;SctyCtgyNm;ISIN\n", "lacks the column of issuer (CrpnNm)"},
		{"export without a day", "Cadastro de instrumentos\n" + exportHeader + "\n", "gives no day"},
		{"short row", InstrumentsHeader + "\n2024-05-27;BBDC4;BBDC\n", "i.csv:2: want at least"},
		{"bad day", InstrumentsHeader + "\n" + strings.Replace(row, "2024-05-27", "27/05/2024", 1), "i.csv:2: RptDt \"27/05/2024\""},
		{"NUL", InstrumentsHeader + "\n" + strings.Replace(row, "BRADESCO", "BRA\x00DESCO", 1), "i.csv:2:48"},
	} {
		_, _, err := ReadInstruments(strings.NewReader(c.in), "i.csv", false)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.name, err, c.want)
		}
	}
	// Lenient: the bad rows are counted, the good one kept.
	in := InstrumentsHeader + "\n2024-05-27;BBDC4;BBDC\n" + strings.Replace(row, "2024-05-27", "x", 1) +
		strings.Replace(row, "BRADESCO", "BRA\x00DESCO", 1) + row
	got, st, err := ReadInstruments(strings.NewReader(in), "i.csv", true)
	if err != nil || len(got) != 1 || st.Malformed != 3 {
		t.Errorf("lenient: %d rows, %+v, %v", len(got), st, err)
	}
}

// exportHeader is the header of the daily bulletin's export of the
// instruments table (InstrumentsEquities), its columns in the bulletin's
// order; the labels the reader uses are those of the published export.
const exportHeader = "Instrumento financeiro;Ativo;Descrição do ativo;Segmento;Mercado;Categoria;Data de vencimento;" +
	"Início de negociação;Fim de negociação;Código ISIN;Código CFI;Tipo de opção;Lote de alocação;Moeda de negociação;" +
	"Tipo de entrega;Preço de exercício;Estilo da opção;Pagamento antecipado do prêmio;Identificador de distribuição;" +
	"Fator de cotação;Dias para liquidação;Tipo de série;Proteção;Exercício automático;Especificação;Nome da instituição;" +
	"Início de evento corporativo;Tratamento de custódia;Capital social;Nível de governança corporativa"

// exportRow is a row of the export: the share's fields given, "-" where
// the export writes none.
func exportRow(ticker, isin, cat, spec, issuer, gov string) string {
	return ticker + ";" + ticker[:4] + ";" + ticker[:4] + ";CASH;EQUITY-CASH;" + cat + ";-;02/01/2020;31/12/9999;" + isin +
		";ESVUFR;-;100;BRL;-;-;-;-;229;1;2;-;-;FALSE;" + spec + ";" + issuer + ";31/12/9999;FUNGIBLE;1000000;" + gov + "\r\n"
}

// TestReadInstrumentsExport reads the daily bulletin's export: text
// before the header (its day in it), Portuguese labels, "-" for none, a
// closing line; and the day from the file's name when the text has none.
func TestReadInstrumentsExport(t *testing.T) {
	body := exportHeader + "\r\n" +
		exportRow("BBDC4", "BRBBDCACNPR8", "SHARES", "PN      N1", "BCO BRADESCO S.A.", "NIVEL 1") +
		exportRow("SANB11", "BRSANBCDAM13", "UNIT", "UNT     N2", "BCO SANTANDER (BRASIL) S.A.", "-") +
		"BBDCL150;BBDC;BBDC;EQUITY CALL;EQUITY-DERIVATE;OPTION ON EQUITIES;-;-;-;BRBBDCACNPR8;-;-;-;-;-;-;-;-;-;-;-;-;-;-;-;-;-;-;-;-\r\n" +
		"Informamos que a tabela acima não será publicada no Boletim Completo\r\n"
	want := func(d engine.Date) []Instrument {
		return []Instrument{
			{Day: d, Ticker: "BBDC4", ISIN: "BRBBDCACNPR8", Category: "SHARES", Spec: "PN N1", Issuer: "BCO BRADESCO S.A.", Governance: "NIVEL 1"},
			{Day: d, Ticker: "SANB11", ISIN: "BRSANBCDAM13", Category: "UNIT", Spec: "UNT N2", Issuer: "BCO SANTANDER (BRASIL) S.A."},
		}
	}
	for _, c := range []struct {
		name, text string
		day        engine.Date
	}{
		{"InstrumentsEquities.csv", "\xef\xbb\xbfCadastro de instrumentos listados - renda variável\r\nGlossário;https://www.b3.com.br/\r\nPosição em 26/11/2026\r\n\r\n", engine.MakeDate(2026, 11, 26)},
		{"dl/api/download/InstrumentsConsolidatedFile/2026-11-25.csv", "Cadastro de instrumentos\r\n\r\n", engine.MakeDate(2026, 11, 25)},
		{"InstrumentsEquities_20261124.csv", "", engine.MakeDate(2026, 11, 24)},
	} {
		got, st, err := ReadInstruments(strings.NewReader(c.text+body), c.name, false)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		w := want(c.day)
		if len(got) != len(w) || got[0] != w[0] || got[1] != w[1] {
			t.Errorf("%s: %+v, want %+v", c.name, got, w)
		}
		if st != (InstrumentStats{Rows: 3, Other: 1}) {
			t.Errorf("%s: stats %+v", c.name, st)
		}
	}
}

func FuzzInstruments(f *testing.F) {
	f.Add([]byte("Status do Arquivo: Final\n" + InstrumentsHeader + "\n" +
		share("2024-05-27", "SANB11", "BRSANBCDAM13", "UNIT", "UNT N2", "BCO SANTANDER (BRASIL) S.A.", "NIVEL 2")))
	f.Add([]byte("RptDt;TckrSymb;SgmtNm;MktNm;SctyCtgyNm;ISIN;CrpnNm\n2021-03-26;PCAR3;CASH;EQUITY-CASH;SHARES;BRPCARACNOR3;CIA\n"))
	f.Add([]byte("Posição em 26/11/2026\n" + exportHeader + "\n" + exportRow("BBDC4", "BRBBDCACNPR8", "SHARES", "PN", "BCO BRADESCO S.A.", "-") + "Fim\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, lenient := range []bool{false, true} {
			ins, _, err := ReadInstruments(bytes.NewReader(data), "f", lenient)
			if err != nil {
				continue
			}
			for _, in := range ins {
				if !engine.ValidTicker(in.Ticker) || !in.Day.Valid() {
					t.Fatalf("accepted %+v", in)
				}
				if in.ISIN != "" && len(in.ISIN) != 12 {
					t.Fatalf("ISIN %q", in.ISIN)
				}
				if strings.IndexByte(in.Issuer+in.Category+in.Spec+in.Governance+in.ISIN, 0) >= 0 {
					t.Fatalf("accepted a NUL byte: %+v", in)
				}
			}
		}
	})
}
