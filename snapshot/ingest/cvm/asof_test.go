package cvm

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/pregao/pregao/engine"
)

// realCadRows returns the lines of the real registry sample whose CNPJ
// (as written, "00.416.968/0001-01") is among cnpjs, with the header.
func realCadRows(tb testing.TB, cnpjs ...string) string {
	tb.Helper()
	lines := strings.SplitAfter(string(readReal(tb, cadFile)), "\n")
	out := lines[0]
	for _, l := range lines[1:] {
		for _, c := range cnpjs {
			if strings.HasPrefix(l, string(latin1(c+";"))) {
				out += l
			}
		}
	}
	return out
}

// cadLine is one registry row in the official layout (47 columns): the
// fields given, the others empty.
func cadLine(cnpj, name, reg, cancel, sit, since, code, market, categ, categSince string) string {
	f := make([]string, 47)
	f[0], f[1], f[2], f[3], f[5], f[7], f[8], f[9] = cnpj, name, name, reg, cancel, sit, since, code
	f[11], f[12], f[13] = market, categ, categSince
	return strings.Join(f, ";") + "\r\n"
}

// TestCompaniesOn reads a registry newer than the day asked about: the
// statuses that began after it are taken back. Real rows: Banco Inter
// (cancelled 2022-12-02), Sul América (cancelled 2022-04-14), Bradesco's
// bank and leasing arm (three registrations, the last active).
func TestCompaniesOn(t *testing.T) {
	in := realCadRows(t, "00.416.968/0001-01", "29.978.814/0001-87", "60.746.948/0001-12", "47.509.120/0001-82")
	in += string(latin1(cadLine("11.111.111/0001-11", "NOVA S.A.", "2023-05-02", "", "ATIVO", "2023-05-02", "90001", "BOLSA", "Categoria A", "2023-05-02")))
	in += string(latin1(cadLine("22.222.222/0001-22", "SUSPENSA S.A.", "2001-01-02", "", "SUSPENSO(A) - DECISÃO ADM", "2023-01-10", "90002", "BOLSA", "Categoria A", "2001-01-02")))
	in += string(latin1(cadLine("33.333.333/0001-33", "REATIVADA S.A.", "2001-01-02", "", "ATIVO", "2022-06-01", "90003", "", "Categoria B", "2022-06-01")))
	// A CNPJ cancelled long ago and registered again after the day.
	in += string(latin1(cadLine("44.444.444/0001-44", "DE NOVO S.A.", "1990-01-02", "1995-03-01", "CANCELADA", "1995-03-01", "90004", "", "", "")))
	in += string(latin1(cadLine("44.444.444/0001-44", "DE NOVO S.A.", "2023-01-02", "", "ATIVO", "2023-01-02", "90005", "BOLSA", "Categoria A", "2023-01-02")))
	rows, err := ReadCadRows(bytes.NewReader([]byte(in)), "cad_cia_aberta.csv", Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := engine.MakeDate(2022, 2, 4)
	comps, _, back := CompaniesOn(rows, d)
	type want struct {
		status string
		since  engine.Date
	}
	for id, w := range map[string]want{
		"00416968000101": {"ACTIVE", engine.NoDate},                  // cancelled 2022-12-02: active on the day
		"29978814000187": {"ACTIVE", engine.NoDate},                  // cancelled 2022-04-14
		"60746948000112": {"ACTIVE", engine.MakeDate(1977, 7, 20)},   // the bank: as registered
		"47509120000182": {"ACTIVE", engine.MakeDate(2004, 11, 24)},  // the leasing arm's active registration
		"11111111000111": {"", engine.NoDate},                        // registered after the day
		"22222222000122": {"ACTIVE", engine.NoDate},                  // suspended after the day
		"33333333000133": {"", engine.NoDate},                        // active again since after the day: unknown before
		"44444444000144": {"CANCELLED", engine.MakeDate(1995, 3, 1)}, // its second registration is later
	} {
		var c *engine.Company
		for i := range comps {
			if comps[i].ID == id {
				c = &comps[i]
			}
		}
		if c == nil {
			t.Fatalf("%s missing", id)
		}
		if c.Status != w.status || c.StatusDate != w.since {
			t.Errorf("%s %s: status %q since %v, want %q since %v", id, c.Name, c.Status, c.StatusDate, w.status, w.since)
		}
	}
	if back != 6 {
		t.Errorf("%d statuses taken back, want 6", back)
	}
	// Without a day, the registry as it stands.
	comps, _, back = CompaniesOn(rows, engine.NoDate)
	for _, c := range comps {
		if c.ID == "00416968000101" && (c.Status != "CANCELLED" || c.StatusDate != engine.MakeDate(2022, 12, 2)) || back != 0 {
			t.Errorf("no day: %+v, %d taken back", c, back)
		}
	}
}

func TestCategoryOn(t *testing.T) {
	rows, err := ReadCadRows(strings.NewReader(realCadRows(t, "06.977.745/0001-91")), "cad_cia_aberta.csv", Options{})
	if err != nil || len(rows) != 1 {
		t.Fatal(rows, err)
	}
	// BR Malls: Categoria B since 2023-02-02.
	r := &rows[0]
	if got := r.CategoryOn(engine.MakeDate(2022, 2, 4)); got != "" {
		t.Errorf("before the change: %q, want unknown", got)
	}
	if got := r.CategoryOn(engine.MakeDate(2023, 2, 2)); got != "Categoria B" {
		t.Errorf("on the day: %q", got)
	}
}

// TestSaoPauloDay: a publication date of the CVM is a São Paulo day; its
// instant falls on that day in São Paulo, not on the evening before.
func TestSaoPauloDay(t *testing.T) {
	brt := time.FixedZone("BRT", -3*3600)
	brst := time.FixedZone("BRST", -2*3600) // daylight saving time, until 2019
	for _, d := range []engine.Date{engine.MakeDate(2023, 6, 14), engine.MakeDate(2018, 1, 15), engine.MakeDate(2000, 1, 1)} {
		tm := SaoPauloDay(d)
		for _, z := range []*time.Location{brt, brst} {
			y, m, day := tm.In(z).Date()
			if engine.MakeDate(y, m, day) != d {
				t.Errorf("%v at %v is %v in %s", d, tm, tm.In(z), z)
			}
		}
	}
	idx, err := ReadDocIndex(strings.NewReader("CNPJ_CIA;DT_REFER;VERSAO;DENOM_CIA;CD_CVM;CATEG_DOC;ID_DOC;DT_RECEB;LINK_DOC\n"+
		"02.635.522/0001-95;2023-03-31;2;JALLES MACHADO S.A.;025496;DFP;129002;2023-06-14;https://www.rad.cvm.gov.br/x\n"),
		"dfp_cia_aberta_2023.csv", Options{})
	if err != nil || len(idx) != 1 {
		t.Fatal(idx, err)
	}
	if got := idx[0].Received.In(brt).Format("2006-01-02"); got != "2023-06-14" {
		t.Errorf("DT_RECEB 2023-06-14 received %v, the %s in São Paulo", idx[0].Received, got)
	}
}
