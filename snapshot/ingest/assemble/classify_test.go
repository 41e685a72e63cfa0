package assemble

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/b3"
	"github.com/pregao/pregao/snapshot/ingest/sectors"
)

// TestClassify places companies by the strongest evidence: B3's
// classification over CVM's coarser activity sector, fund segments, ETF
// geographies, and nothing else; what the mapping lacks is listed.
func TestClassify(t *testing.T) {
	a := newAssembler(DefaultConfig())
	a.details = []*b3.Details{
		{CNPJ: "1", Industry: []string{"Financeiro", "Intermediários Financeiros", "Bancos"}},
		{CNPJ: "2", Industry: []string{"Nenhum", "Setor", "Conhecido"}},
	}
	a.etfGeo = map[string]string{"BOVA": "BR", "MARS": "MARTE"}
	a.cadUnmapped = []string{"Astronáutica"}
	cos := []engine.Company{
		// CVM says holding; B3 says bank: B3 wins.
		{ID: "1", Kind: engine.KindCompany, SubIndustryID: "HOLDINGS"},
		// B3's classification is unknown: the CVM one stays.
		{ID: "2", Kind: engine.KindCompany, SubIndustryID: "ELECTRIC_POWER"},
		{ID: "3", Kind: engine.KindFII, SubIndustryID: "FII_LOGISTICS"},
		{ID: "4", Kind: engine.KindETF, Symbol: "BOVA"},
		{ID: "5", Kind: engine.KindETF, Symbol: "MARS"},
		{ID: "6", Kind: engine.KindCompany},
	}
	a.classify(cos)
	var got []string
	for _, c := range cos {
		got = append(got, c.SubIndustryID)
	}
	want := []string{"TRADITIONAL_BANKS", "ELECTRIC_POWER", "FII_LOGISTICS", "ETF_BRAZIL_EQUITY", sectors.UnclassifiedID, sectors.UnclassifiedID}
	if !slices.Equal(got, want) {
		t.Errorf("sub-industries\n got %q\nwant %q", got, want)
	}
	r := a.rep
	if r.SectorsBy[sectors.B3] != 1 || r.SectorsBy[sectors.CVM] != 1 || r.SectorsBy[sectors.FII] != 1 || r.SectorsBy[sectors.ETF] != 1 || r.SectorsBy[sectors.None] != 2 {
		t.Errorf("counts %v", r.SectorsBy)
	}
	wantUn := []string{`B3 classification "Nenhum / Setor / Conhecido"`, `CVM SETOR_ATIV "Astronáutica"`, `ETF listing Geografia "MARTE"`}
	if !slices.Equal(r.UnmappedSectors, wantUn) {
		t.Errorf("unmapped %q", r.UnmappedSectors)
	}
	var buf bytes.Buffer
	r.WriteSummary(&buf, &engine.Universe{Companies: cos})
	for _, line := range []string{
		"sectors: 1 companies by B3's classification, 1 by CVM's activity sector (coarser), 1 funds by FII segment, 1 ETFs by listed geography, 2 unclassified (no evidence)",
		`3 official classifications not in the sector mapping`,
	} {
		if !strings.Contains(buf.String(), line) {
			t.Errorf("summary lacks %q:\n%s", line, buf.String())
		}
	}
}
