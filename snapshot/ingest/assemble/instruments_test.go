package assemble

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/b3"
)

// instrumentRow is the official-layout row of a cash-market share: day,
// ticker, ISIN, category, SpcfctnCd and CrpnNm given, the rest empty.
func instrumentRow(day, ticker, isin, cat, spec, issuer string) string {
	h := strings.Split(b3.InstrumentsHeader, ";")
	v := map[string]string{"RptDt": day, "TckrSymb": ticker, "Asst": ticker[:4], "AsstDesc": ticker[:4], "SgmtNm": "CASH",
		"MktNm": "EQUITY-CASH", "SctyCtgyNm": cat, "ISIN": isin, "AllcnRndLot": "100", "TradgCcy": "BRL", "SpcfctnCd": spec, "CrpnNm": issuer}
	f := make([]string, len(h))
	for i, c := range h {
		f[i] = v[c]
	}
	return strings.Join(f, ";") + "\r\n"
}

// TestRunInstrumentsLink imports the real registry (2024-05-27) and the
// real COTAHIST of 2022-02-04 with B3's instruments file of that day,
// written in the official layout, for shares the name rule alone left on
// made-up issuers, tied or on no registrant: the legal name B3 gives
// links each to its registrant, B3's abbreviations (CIA, BCO) and the
// corporate form's spelling (S/A, S.A., SA) aside, and the ISIN's issuer
// code then ties the company's other classes. A legal name the registry
// no longer holds (VIA S.A., now Grupo Casas Bahia; Locaweb, now LWSA)
// links nothing and is listed.
func TestRunInstrumentsLink(t *testing.T) {
	dir := realDir(t)
	const day = "2022-02-04"
	rows := b3.InstrumentsHeader + "\r\n" +
		instrumentRow(day, "ASAI3", "BRASAIACNOR0", "SHARES", "ON      NM", "SENDAS DISTRIBUIDORA S.A.") +
		instrumentRow(day, "PCAR3", "BRPCARACNOR3", "SHARES", "ON      NM", "CIA BRASILEIRA DE DISTRIBUICAO") +
		instrumentRow(day, "GOAU4", "BRGOAUACNPR8", "SHARES", "PN      N1", "METALURGICA GERDAU S.A.") +
		instrumentRow(day, "PETZ3", "BRPETZACNOR2", "SHARES", "ON      NM", "PET CENTER COMERCIO E PARTICIPACOES S.A.") +
		instrumentRow(day, "AESB3", "BRAESBACNOR7", "SHARES", "ON      NM", "AES BRASIL ENERGIA S.A.") +
		instrumentRow(day, "NTCO3", "BRNTCOACNOR5", "SHARES", "ON      NM", "NATURA &CO HOLDING S.A.") +
		instrumentRow(day, "CRFB3", "BRCRFBACNOR2", "SHARES", "ON      NM", "ATACADÃO S.A.") +
		instrumentRow(day, "BBDC4", "BRBBDCACNPR8", "SHARES", "PN      N1", "BCO BRADESCO S.A.") +
		instrumentRow(day, "SANB11", "BRSANBCDAM13", "UNIT", "UNT     N2", "BCO SANTANDER (BRASIL) S.A.") +
		instrumentRow(day, "VIIA3", "BRVIIAACNOR7", "SHARES", "ON      NM", "VIA S.A.") +
		instrumentRow(day, "LWSA3", "BRLWSAACNOR8", "SHARES", "ON      NM", "LOCAWEB SERVICOS DE INTERNET S.A.") +
		// A row whose ISIN is not the quote's: another security now under the ticker.
		instrumentRow(day, "DTEX3", "BRDTEXACNOR9", "SHARES", "ON      NM", "AES BRASIL ENERGIA S.A.")
	path := filepath.Join(t.TempDir(), "InstrumentsConsolidatedFile_20220204.csv")
	if err := os.WriteFile(path, []byte(rows), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.Cad = filepath.Join(dir, "cvm-cad/cad_cia_aberta.csv.zst")
	cfg.Cotahist = []string{filepath.Join(dir, lastDay)}
	_, without := run(t, cfg)
	cfg.Instruments = []string{path}
	u, rep := run(t, cfg)

	co := map[string]string{}
	for _, s := range u.Securities {
		co[s.Ticker] = s.CompanyID
	}
	for _, c := range []struct{ ticker, want, why string }{
		{"ASAI3", "06057223000171", "Sendas Distribuidora, not Sendas S/A (cancelled)"},
		{"PCAR3", "47508411000156", "CIA is COMPANHIA; the accents fold"},
		{"GOAU4", "92690783000109", "S.A. is SA"},
		{"GOAU3", "92690783000109", "the issuer code of GOAU4's ISIN"},
		{"PETZ3", "18328118000109", ""},
		{"AESB3", "37663076000107", "AES Brasil Energia, not AES Brasil Operações: the name rule's tie broken"},
		{"NTCO3", "32785497000197", "&CO is CO"},
		{"CRFB3", "75315333000109", "Atacadão, whose name says nothing of Carrefour"},
		{"BBDC4", "60746948000112", "BCO is BANCO"},
		{"BBDC3", "60746948000112", "the issuer code"},
		{"SANB11", "90400888000142", ""},
		{"SANB3", "90400888000142", "the issuer code"},
	} {
		if co[c.ticker] != c.want {
			t.Errorf("%s on %q, want %s (%s)", c.ticker, co[c.ticker], c.want, c.why)
		}
	}
	t.Logf("name-only links %d -> %d, made-up issuers %d -> %d, ambiguous %d -> %d, by the instruments file %d, by the issuer code %d -> %d",
		without.Linked[byName], rep.Linked[byName], without.Minimal, rep.Minimal, len(without.Ambiguous), len(rep.Ambiguous),
		rep.Linked[byListing], without.Linked[byCode], rep.Linked[byCode])
	if rep.Linked[byListing] != 9 {
		t.Errorf("%d linked by the instruments file, want 9 (ASAI3 PCAR3 GOAU4 PETZ3 AESB3 NTCO3 CRFB3 BBDC4 SANB11)", rep.Linked[byListing])
	}
	if rep.Linked[byName] >= without.Linked[byName] || rep.Minimal >= without.Minimal {
		t.Errorf("name links %d -> %d, made-up issuers %d -> %d: want fewer of both", without.Linked[byName], rep.Linked[byName],
			without.Minimal, rep.Minimal)
	}
	if got := strings.Join(rep.ListingUnmatched, "; "); got != `VIIA3 ("VIA S.A."); LWSA3 ("LOCAWEB SERVICOS DE INTERNET S.A.")` &&
		got != `LWSA3 ("LOCAWEB SERVICOS DE INTERNET S.A."); VIIA3 ("VIA S.A.")` {
		t.Errorf("unmatched: %s", got)
	}
	for _, a := range rep.Ambiguous {
		if strings.HasPrefix(a, "AESB3") {
			t.Errorf("AESB3 still ambiguous: %s", a)
		}
	}
	var b bytes.Buffer
	rep.WriteSummary(&b, u)
	for _, want := range []string{"9 by B3's instruments file (the issuer's legal name)", "B3 instruments: 12 rows", `VIIA3 ("VIA S.A.")`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, b.String())
		}
	}
}

// TestInstrumentRowNearest checks which of a ticker's rows in several
// instruments files is used: the latest on or before the last session,
// else the earliest after it.
func TestInstrumentRowNearest(t *testing.T) {
	tmp := t.TempDir()
	write := func(name, day, issuer string) string {
		p := filepath.Join(tmp, name)
		body := b3.InstrumentsHeader + "\n" + instrumentRow(day, "ABCD3", "BRABCDACNOR1", "SHARES", "ON", issuer)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	last := engine.MakeDate(2022, 2, 4)
	for _, c := range []struct {
		files []string
		want  string
	}{
		{[]string{write("a.csv", "2022-01-03", "OLD S.A."), write("b.csv", "2022-02-04", "ON THE DAY S.A."), write("c.csv", "2024-05-27", "LATER S.A.")}, "ON THE DAY S.A."},
		{[]string{write("d.csv", "2024-05-27", "LATER S.A."), write("e.csv", "2023-01-02", "SOONER S.A.")}, "SOONER S.A."},
	} {
		a := newAssembler(Config{Instruments: c.files})
		a.lastSession = last
		if err := a.readInstruments(t.Context(), nil); err != nil {
			t.Fatal(err)
		}
		if got := a.instrTicker["ABCD3"].Issuer; got != c.want {
			t.Errorf("by ticker: %q, want %q", got, c.want)
		}
		if got := a.instrISIN["BRABCDACNOR1"].Issuer; got != c.want {
			t.Errorf("by ISIN: %q, want %q", got, c.want)
		}
	}
}

func TestSameLegalName(t *testing.T) {
	f := func(b3, cvm string, want bool) {
		t.Helper()
		if got := sameLegalName(legalWords(b3), legalWords(cvm)); got != want {
			t.Errorf("sameLegalName(%q, %q) = %v", b3, cvm, got)
		}
	}
	f("BCO BRADESCO S.A.", "BANCO BRADESCO S.A.", true)
	f("BCO SANTANDER (BRASIL) S.A.", "BANCO SANTANDER (BRASIL) S.A.", true)
	f("CIA BRASILEIRA DE DISTRIBUICAO", "COMPANHIA BRASILEIRA DE DISTRIBUIÇÃO", true)
	f("METALURGICA GERDAU S.A.", "METALURGICA GERDAU SA", true)
	f("AES BRASIL ENERGIA S.A.", "AES Brasil Energia S/A", true)
	f("CENTRAIS ELET BRAS S.A. - ELETROBRAS", "CENTRAIS ELETRICAS BRASILEIRAS S.A. - ELETROBRAS", true)
	f("PETROLEO BRASILEIRO S.A. PETROBRAS", "PETROLEO BRASILEIRO S.A. PETROBRAS", true)
	f("AES BRASIL ENERGIA S.A.", "AES BRASIL OPERAÇÕES S.A.", false)
	f("BCO BRADESCO S.A.", "BRADESCO LEASING S.A. - ARRENDAMENTO MERCANTIL", false)
	f("SENDAS DISTRIBUIDORA S.A.", "SENDAS S/A", false)
	f("BANCO BRADESCO S.A.", "BCO BRADESCO S.A.", false) // the registry's word abbreviated: not B3's way
	f("B S.A.", "BANCO S.A.", false)                     // one letter is no abbreviation
	f("S.A.", "LTDA", false)
	f("VIA S.A.", "VITTIA S.A.", false)              // nothing but an abbreviation
	f("CIA BCO S.A.", "COMPANHIA BANCO S.A.", false) // generic words and abbreviations only
	f("CIA ELET BRAS FOO", "CAPITAL ELETRICAS BRASILEIRAS FOO", false)
	f("", "", false)
}
