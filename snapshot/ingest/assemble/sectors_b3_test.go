package assemble

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/cvm"
	"github.com/pregao/pregao/snapshot/ingest/datafile"
	"github.com/pregao/pregao/snapshot/ingest/sectors"
)

// sectorReviewAgree is the number of companies of B3's Classificação
// Setorial (testdata/real/b3-sectors) whose registry activity sector maps
// (sectors/mapping.tsv) to B3's own sub-industry, of those joined to a
// registrant; the review of the mapping table measured it.
const sectorReviewAgree = 178

// TestSectorMappingAgainstB3 reviews the mapping of CVM's SETOR_ATIV
// against B3's own classification: every company of B3's Classificação
// Setorial is joined to its registrant in the registry of 2024-05-27 (the
// name rule, with B3's trading name and issuer code), B3's classification
// is mapped to a sub-industry (sectors.FromB3) and compared with what the
// company's SETOR_ATIV maps to. It fails when agreement drops below the
// reviewed figure, when one of B3's classifications maps to nothing, and
// unless every disagreement, and nothing else, is listed in mapping.tsv's
// "# differs" notes.
func TestSectorMappingAgainstB3(t *testing.T) {
	dir := realDir(t)
	b, err := datafile.ReadFile(filepath.Join(dir, "b3-sectors/luizgaio__analise_fundamentalista/ClassifSetorial.csv.zst"))
	if err != nil {
		t.Fatal(err)
	}
	cb, err := datafile.ReadFile(filepath.Join(dir, "cvm-cad/cad_cia_aberta.csv.zst"))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := cvm.ReadCadRows(strings.NewReader(datafile.Text(cb)), "cad_cia_aberta.csv", cvm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := engine.MakeDate(2024, 5, 27)
	cos, _, _ := cvm.CompaniesOn(rows, d)
	m := map[string]*engine.Company{}
	for i := range cos {
		m[cos[i].ID] = &cos[i]
	}
	var qs []nameQuery
	var b3 [][]string
	for i, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Split(l, ";")
		if i == 0 {
			continue
		}
		if len(f) != 6 {
			t.Fatalf("line %d: %q", i+1, l)
		}
		qs = append(qs, nameQuery{code: f[4], short: f[3], last: d})
		b3 = append(b3, f)
	}
	ans := newNameIndex(m, rows).resolve(qs)
	joined, agree := 0, 0
	var differs []string
	for i, q := range qs {
		a := ans[q.code]
		if a.id == "" {
			continue
		}
		joined++
		want, ok := sectors.FromB3(b3[i][:3])
		if !ok {
			t.Errorf("%s: B3's classification %q maps to no sub-industry", q.code, strings.Join(b3[i][:3], " / "))
			continue
		}
		if got := m[a.id].SubIndustryID; got == want {
			agree++
		} else {
			differs = append(differs, q.code+"\t"+want+"\t"+got)
		}
	}
	t.Logf("B3 classifies %d companies; %d joined to a registrant; the mapping agrees for %d (%.1f %%)", len(qs), joined, agree, 100*float64(agree)/float64(joined))
	if agree < sectorReviewAgree {
		t.Errorf("agreement %d, below the reviewed %d", agree, sectorReviewAgree)
	}
	tbl, err := os.ReadFile("../sectors/mapping.tsv")
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, l := range strings.Split(string(tbl), "\n") {
		if rest, ok := strings.CutPrefix(l, "# differs\t"); ok {
			f := strings.Split(rest, "\t")
			if len(f) < 3 {
				t.Fatalf("mapping.tsv: %q", l)
			}
			listed = append(listed, strings.Join(f[:3], "\t"))
		}
	}
	slices.Sort(differs)
	slices.Sort(listed)
	for _, x := range differs {
		if _, found := slices.BinarySearch(listed, x); !found {
			t.Errorf("disagreement not in mapping.tsv's notes: # differs\t%s", x)
		}
	}
	for _, x := range listed {
		if _, found := slices.BinarySearch(differs, x); !found {
			t.Errorf("mapping.tsv notes a disagreement the review does not find: %s", x)
		}
	}
}
