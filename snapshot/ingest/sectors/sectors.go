// Package sectors holds Pregão's sector taxonomy and the reviewed tables
// that map official classifications onto it.
//
// The taxonomy (taxonomy.txt) has four levels (sector, industry group,
// industry, sub-industry) with stable upper-case English ids such as
// FINANCIALS or TRADITIONAL_BANKS. Every dataset, the demo and imports of
// official files alike, carries the whole tree, so a screener filter on a
// sector id means the same thing on any snapshot.
//
// Companies are placed on a sub-industry by the strongest evidence:
// B3's classification (GetDetailsCompany "industryClassification", three
// levels whose names are those of the taxonomy's levels 1, 2 and 4), then
// CVM's registry activity sector (SETOR_ATIV, mapping.tsv); funds by the
// segment of CVM's FII monthly report or the geography of B3's ETF
// listing. Anything else hangs from UnclassifiedID.
//
// It imports engine only; the tables are embedded and parsed once.
package sectors

import (
	_ "embed"
	"fmt"
	"strings"
	"sync"

	"github.com/pregao/pregao/engine"
)

//go:embed taxonomy.txt
var taxonomyText string

//go:embed mapping.tsv
var mappingText string

// UnclassifiedID is the sub-industry of a company no source classifies.
const UnclassifiedID = "UNCLASSIFIED_COMPANIES"

// Node is one taxonomy node with the Portuguese name it carries in B3's
// classification (levels 1, 2, 4) or in Pregão's own grouping (level 3).
type Node struct {
	engine.Sector
	Portuguese string
}

// Source names the evidence a sub-industry was chosen from.
type Source int

const (
	None Source = iota // no evidence: UnclassifiedID
	B3                 // B3's sector classification
	CVM                // CVM registry activity sector (SETOR_ATIV)
	FII                // FII monthly report segment
	ETF                // B3 ETF listing geography
)

func (s Source) String() string {
	return [...]string{"none", "B3 classification", "CVM activity sector", "FII segment", "ETF listing"}[s]
}

type tables struct {
	nodes  []Node            // depth-first, parents before children
	byID   map[string]int    // id -> index in nodes
	b3Path map[string]string // folded "setor/subsetor/segmento" -> sub-industry id
	b3Seg  map[string]string // folded segment -> sub-industry id; "" when two share it
	maps   map[Source]map[string]string
	// values lists, per source and sub-industry, the values of the
	// mapping table that map to it, as written, in table order.
	values map[Source]map[string][]string
}

var (
	once sync.Once
	tab  *tables
	err0 error
)

func load() (*tables, error) {
	once.Do(func() { tab, err0 = parse(taxonomyText, mappingText) })
	return tab, err0
}

func must() *tables {
	t, err := load()
	if err != nil {
		panic("BUG: sector tables: " + err.Error())
	}
	return t
}

// Nodes returns a copy of the whole taxonomy in depth-first order
// (parents before children).
func Nodes() []Node { return append([]Node(nil), must().nodes...) }

// Tree returns the taxonomy as engine sectors, depth-first; the caller
// owns the slice.
func Tree() []engine.Sector {
	t := must()
	out := make([]engine.Sector, len(t.nodes))
	for i, n := range t.nodes {
		out[i] = n.Sector
	}
	return out
}

// Lookup returns the node of an id.
func Lookup(id string) (Node, bool) {
	t := must()
	i, ok := t.byID[id]
	if !ok {
		return Node{}, false
	}
	return t.nodes[i], true
}

// Path returns the nodes of levels 1..4 leading to a sub-industry.
func Path(subID string) ([4]Node, bool) {
	t := must()
	var p [4]Node
	i, ok := t.byID[subID]
	if !ok || t.nodes[i].Level != 4 {
		return p, false
	}
	for {
		n := t.nodes[i]
		p[n.Level-1] = n
		if n.ParentID == "" {
			return p, true
		}
		i = t.byID[n.ParentID]
	}
}

// B3Classification returns the classification B3 writes for a
// sub-industry ("Financeiro / Intermediários Financeiros / Bancos"): the
// Portuguese names of levels 1, 2 and 4.
func B3Classification(subID string) (string, bool) {
	p, ok := Path(subID)
	if !ok {
		return "", false
	}
	return p[0].Portuguese + " / " + p[1].Portuguese + " / " + p[3].Portuguese, true
}

// FromB3 maps B3's classification, given as its levels (setor, subsetor,
// segmento, as GetDetailsCompany's "industryClassification" split on
// " / "), to a sub-industry: by the whole path, as the taxonomy names it
// or as mapping.tsv's b3 lines spell it where B3's files differ, else by
// the segment alone when only one sub-industry carries that name.
func FromB3(levels []string) (string, bool) {
	t := must()
	if len(levels) == 0 {
		return "", false
	}
	if len(levels) == 3 {
		if id, ok := t.maps[B3][fold(strings.Join(levels, " / "))]; ok {
			return id, true
		}
		if id, ok := t.b3Path[fold(levels[0])+"/"+fold(levels[1])+"/"+fold(levels[2])]; ok {
			return id, true
		}
	}
	id := t.b3Seg[fold(levels[len(levels)-1])]
	return id, id != ""
}

// FromCVM maps a registry SETOR_ATIV value to a sub-industry; a holding's
// "Emp. Adm. Part. - X" maps as X.
func FromCVM(setorAtiv string) (string, bool) {
	m := must().maps[CVM]
	k := fold(setorAtiv)
	if id, ok := m[k]; ok {
		return id, true
	}
	if rest, ok := strings.CutPrefix(k, "emp. adm. part."); ok {
		rest = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(rest), "-"))
		if id, ok := m[rest]; ok {
			return id, true
		}
	}
	return "", false
}

// FromFII maps an FII monthly report Segmento_Atuacao to a sub-industry.
func FromFII(segment string) (string, bool) {
	id, ok := must().maps[FII][fold(segment)]
	return id, ok
}

// FromETF maps the Geografia of B3's ETF listing to a sub-industry.
func FromETF(geography string) (string, bool) {
	id, ok := must().maps[ETF][fold(geography)]
	return id, ok
}

// Mapped returns the values of a source's table that map to a
// sub-industry, as the table writes them, in table order (for writers of
// official files). The slice is shared: callers must not modify it.
func Mapped(src Source, subID string) []string { return must().values[src][subID] }

func parse(taxonomy, mapping string) (*tables, error) {
	t := &tables{byID: map[string]int{}, b3Path: map[string]string{}, b3Seg: map[string]string{},
		maps: map[Source]map[string]string{}, values: map[Source]map[string][]string{}}
	var path [4]int
	for n, line := range strings.Split(taxonomy, "\n") {
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		lvl := len(line) - len(strings.TrimLeft(line, " ")) + 1
		f := strings.Split(strings.TrimSpace(line), " | ")
		if lvl > 4 || len(f) != 3 {
			return nil, fmt.Errorf("taxonomy line %d: want 0-3 spaces and ID | name | Portuguese name", n+1)
		}
		id, name, pt := f[0], f[1], f[2]
		if !validID(id) || name == "" || pt == "" {
			return nil, fmt.Errorf("taxonomy line %d: bad id %q or empty name", n+1, id)
		}
		if _, dup := t.byID[id]; dup {
			return nil, fmt.Errorf("taxonomy line %d: id %s repeated", n+1, id)
		}
		parent := ""
		if lvl > 1 {
			if len(t.nodes) == 0 || t.nodes[path[lvl-2]].Level != lvl-1 {
				return nil, fmt.Errorf("taxonomy line %d: %s has no parent at level %d", n+1, id, lvl-1)
			}
			parent = t.nodes[path[lvl-2]].ID
		}
		if lvl < 4 && len(t.nodes) > 0 && t.nodes[len(t.nodes)-1].Level < 4 && t.nodes[len(t.nodes)-1].Level >= lvl {
			return nil, fmt.Errorf("taxonomy line %d: %s follows a node without sub-industries", n+1, id)
		}
		path[lvl-1] = len(t.nodes)
		t.byID[id] = len(t.nodes)
		t.nodes = append(t.nodes, Node{Sector: engine.Sector{ID: id, Name: name, Level: lvl, ParentID: parent}, Portuguese: pt})
		if lvl == 4 {
			l1, l2 := t.nodes[path[0]], t.nodes[path[1]]
			k := fold(l1.Portuguese) + "/" + fold(l2.Portuguese) + "/" + fold(pt)
			if _, dup := t.b3Path[k]; dup {
				return nil, fmt.Errorf("taxonomy line %d: B3 classification %q repeated", n+1, k)
			}
			t.b3Path[k] = id
			seg := fold(pt)
			if _, seen := t.b3Seg[seg]; seen {
				t.b3Seg[seg] = "" // ambiguous alone
			} else {
				t.b3Seg[seg] = id
			}
		}
	}
	if len(t.nodes) == 0 || t.nodes[len(t.nodes)-1].Level != 4 {
		return nil, fmt.Errorf("taxonomy: empty, or its last node is not a sub-industry")
	}
	if n, ok := t.byID[UnclassifiedID]; !ok || t.nodes[n].Level != 4 {
		return nil, fmt.Errorf("taxonomy: no sub-industry %s", UnclassifiedID)
	}
	for n, line := range strings.Split(mapping, "\n") {
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) < 3 || len(f) > 4 {
			return nil, fmt.Errorf("mapping line %d: want source, value, sub-industry[, note] separated by tabs", n+1)
		}
		var src Source
		switch f[0] {
		case "b3":
			src = B3
			if len(strings.Split(f[1], " / ")) != 3 {
				return nil, fmt.Errorf("mapping line %d: a b3 value is \"setor / subsetor / segmento\", got %q", n+1, f[1])
			}
		case "cvm":
			src = CVM
		case "fii":
			src = FII
		case "etf":
			src = ETF
		default:
			return nil, fmt.Errorf("mapping line %d: unknown source %q", n+1, f[0])
		}
		i, ok := t.byID[f[2]]
		if !ok || t.nodes[i].Level != 4 {
			return nil, fmt.Errorf("mapping line %d: %q is not a sub-industry", n+1, f[2])
		}
		if t.maps[src] == nil {
			t.maps[src] = map[string]string{}
		}
		k := fold(f[1])
		if _, dup := t.maps[src][k]; dup {
			return nil, fmt.Errorf("mapping line %d: %s value %q repeated", n+1, f[0], f[1])
		}
		t.maps[src][k] = f[2]
		if t.values[src] == nil {
			t.values[src] = map[string][]string{}
		}
		t.values[src][f[2]] = append(t.values[src][f[2]], f[1])
	}
	return t, nil
}

func validID(id string) bool {
	if id == "" || id[0] < 'A' || id[0] > 'Z' {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// fold lower-cases s, drops Portuguese accents and collapses runs of
// spaces, for matching names as different files write them.
func fold(s string) string {
	var b strings.Builder
	space := false
	for _, r := range strings.TrimSpace(s) {
		switch r {
		case 'á', 'à', 'â', 'ã', 'ä', 'Á', 'À', 'Â', 'Ã', 'Ä':
			r = 'a'
		case 'é', 'è', 'ê', 'ë', 'É', 'È', 'Ê', 'Ë':
			r = 'e'
		case 'í', 'ì', 'î', 'ï', 'Í', 'Ì', 'Î', 'Ï':
			r = 'i'
		case 'ó', 'ò', 'ô', 'õ', 'ö', 'Ó', 'Ò', 'Ô', 'Õ', 'Ö':
			r = 'o'
		case 'ú', 'ù', 'û', 'ü', 'Ú', 'Ù', 'Û', 'Ü':
			r = 'u'
		case 'ç', 'Ç':
			r = 'c'
		}
		if r == ' ' || r == '\t' || r == '\u00a0' {
			space = true
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		if r >= 'A' && r <= 'Z' {
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}
