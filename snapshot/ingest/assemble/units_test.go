package assemble

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pregao/pregao/snapshot/ingest/datafile"
)

// TestRunUnitComposition imports quote records of a company's common,
// preferred and unit shares and its FCA valor_mobiliario rows in the
// official layouts: the unit gets the composition the FCA declares ("1 ON
// e 2 PN": 3 shares), also when the FCA's unit row carries no real ticker
// ("000000", as some do). Without the FCA the summary lists the units left
// without a composition.
func TestRunUnitComposition(t *testing.T) {
	dir := t.TempDir()
	quotes := cotahistFile(t, dir, "COTAHIST_D04022022.TXT",
		quoteRec{"20220204", "ALFA3", "ALFA", "ON      N2", "BRALFAACNOR1", ""},
		quoteRec{"20220204", "ALFA4", "ALFA", "PN      N2", "BRALFAACNPR1", ""},
		quoteRec{"20220204", "ALFA11", "ALFA", "UNT     N2", "BRALFACDAM11", ""},
		quoteRec{"20220204", "BETA11", "BETA", "UNT     N2", "BRBETACDAM11", ""},
	)
	fca := fcaTable(t, dir, "valor_mobiliario",
		"11111111000111;2021-01-01;1;1;ALFA S.A.;Units;;;ALFA11;1 ON e 2 PN;Bolsa;B3;B3 S.A.;2010-01-04;;Nível 2;2010-01-04;\n"+
			"11111111000111;2021-01-01;1;1;ALFA S.A.;Ações Ordinárias;;;ALFA3;;Bolsa;B3;B3 S.A.;2010-01-04;;Nível 2;2010-01-04;\n"+
			"22222222000122;2021-01-01;1;2;BETA S.A.;Units;;;000000;1 ON E 4 PN;Bolsa;B3;B3 S.A.;2012-05-02;;Nível 2;2012-05-02;\n"+
			"22222222000122;2021-01-01;1;2;BETA S.A.;Ações Preferenciais;PN;Preferencial;BETA4;;Bolsa;B3;B3 S.A.;2012-05-02;;Nível 2;2012-05-02;\n")
	cad := filepath.Join(dir, "cad_cia_aberta.csv")
	h, err := datafile.ReadFile(filepath.Join(realDir(t), "cvm-headers/cad_cia_aberta_header.csv.zst"))
	if err != nil {
		t.Fatal(err)
	}
	rows := cadLine("11.111.111/0001-11", "ALFA S.A.", "2001-01-02", "", "ATIVO", "2001-01-02", "90001", "BOLSA", "Categoria A") +
		cadLine("22.222.222/0001-22", "BETA S.A.", "2001-01-02", "", "ATIVO", "2001-01-02", "90002", "BOLSA", "Categoria A")
	if err := os.WriteFile(cad, append(h, rows...), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.Cad = cad
	cfg.Cotahist = []string{quotes}
	cfg.FCA = []string{fca}
	u, rep := run(t, cfg)
	factor := map[string]float64{}
	for _, s := range u.Securities {
		factor[s.Ticker] = float64(s.UnitFactor)
	}
	if factor["ALFA11"] != 3 {
		t.Errorf("ALFA11 unit factor %v, want 3", factor["ALFA11"])
	}
	// BETA11: linked by its ISIN's issuer code, which the FCA ticker BETA4
	// ties to Beta; its composition is the company's one unit row.
	if factor["BETA11"] != 5 {
		t.Errorf("BETA11 unit factor %v, want 5", factor["BETA11"])
	}
	if rep.UnitsComposed != 2 || len(rep.UnitsWithout) != 0 || rep.Linked[byFCA] != 2 || rep.Linked[byCode] != 2 {
		t.Errorf("units composed %d, without %v; linked %v", rep.UnitsComposed, rep.UnitsWithout, rep.Linked)
	}

	cfg.FCA = nil
	u, rep = run(t, cfg)
	var b bytes.Buffer
	rep.WriteSummary(&b, u)
	if !strings.Contains(b.String(), "units: 0 with their composition from the FCA (Composicao_BDR_Unit), 2 without one (no per-share ratios; give the FCA): ALFA11 BETA11") {
		t.Errorf("summary:\n%s", b.String())
	}
}
