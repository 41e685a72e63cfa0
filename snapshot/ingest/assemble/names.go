package assemble

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/cvm"
)

// normName folds a name to upper-case letters and digits for matching
// ("Ambev S.A." -> "AMBEVSA"): the accented letters of Portuguese become
// their ASCII letter ("Itaú" -> "ITAU"), other letters are upper-cased,
// an ampersand reads E, as B3's short names spell it ("C&A Modas" ->
// "CEAMODAS", "Plano & Plano" -> "PLANOEPLANO"), everything else
// (spaces, punctuation) is dropped.
func normName(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '&' && nameRules&ruleAmpersand != 0:
			b.WriteByte('E')
		case r >= 'a' && r <= 'z':
			b.WriteRune(r - 32)
		case r >= 'A' && r <= 'Z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		case r > 127 && unicode.IsLetter(r):
			b.WriteRune(unicode.ToUpper(foldRune(r)))
		}
	}
	return b.String()
}

func foldRune(r rune) rune {
	switch unicode.ToLower(r) {
	case 'á', 'à', 'â', 'ã', 'ä':
		return 'a'
	case 'é', 'ê', 'è':
		return 'e'
	case 'í', 'ì':
		return 'i'
	case 'ó', 'ô', 'õ', 'ò':
		return 'o'
	case 'ú', 'ü', 'ù':
		return 'u'
	case 'ç':
		return 'c'
	}
	return r
}

// The rules that read B3's abbreviated short names against the
// registry's names beyond whole words and prefixes (issue 38), each a bit
// of nameRules; all on, but a test measures what each links.
const (
	ruleAmpersand = 1 << iota // & reads E
	ruleGlued                 // a corporate form glued to a one-word short name: ATMASA, PETRORECSA, ATOMPAR
	ruleAnyOrder              // words in another order: LOJAS MARISA is Marisa Lojas, GERDAU MET Metalúrgica Gerdau
	ruleCountry               // a trailing BR (Brasil) left out: GETNET BR
	ruleAbbrev                // words abbreviated by letters: EQTL PARA, MANGELS INDL
	ruleFormer                // the registrant's former names, before its rename (FCA geral)
	ruleAll       = 1<<iota - 1
)

var nameRules = ruleAll

// nameWords splits a name into normalized words ("Construtora Tenda
// S/A" -> CONSTRUTORA, TENDA, S, A).
func nameWords(s string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if n := normName(w); n != "" {
			out = append(out, n)
		}
	}
	return out
}

// hasRun reports whether run occurs in words as consecutive elements.
func hasRun(words, run []string) bool {
	return runAt(words, run, func(w, r string) bool { return w == r })
}

// runAt reports whether run occurs in words as consecutive elements, each
// word matching its element by eq.
func runAt(words, run []string, eq func(w, r string) bool) bool {
	for i := 0; i+len(run) <= len(words); i++ {
		ok := true
		for k := range run {
			if !eq(words[i+k], run[k]) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// connector words are left out of runs of words: "ALFA INVEST" is a run
// of "BANCO ALFA DE INVESTIMENTO".
var connector = map[string]bool{"DE": true, "DA": true, "DO": true, "DAS": true, "DOS": true, "E": true}

// generic words say nothing of which company a short name is: corporate
// forms, share classes and the abbreviations COTAHIST short names add
// ("INDS ROMI" is ROMI S.A., once Indústrias Romi; "COGNA ON" is Cogna
// Educação S.A.).
var generic = map[string]bool{"S": true, "A": true, "SA": true, "CIA": true, "COMPANHIA": true, "IND": true, "INDS": true,
	"INDUSTRIA": true, "INDUSTRIAS": true, "PAR": true, "PART": true, "PARTICIP": true, "PARTICIPACOES": true, "LTDA": true,
	"HOLDING": true, "EM": true, "RECUPERACAO": true, "JUDICIAL": true, "DE": true, "DA": true, "DO": true, "DAS": true,
	"DOS": true, "E": true, "GRUPO": true, "ON": true, "PN": true}

func without(words []string, drop map[string]bool) []string {
	var out []string
	for _, w := range words {
		if !drop[w] {
			out = append(out, w)
		}
	}
	return out
}

// matchLevel ranks how a short name matches a name; higher is closer, 0
// is no match.
type matchLevel int

const (
	noMatch       matchLevel = iota
	matchLoose               // only without the generic words, or as the name's initials
	matchContains            // the short words begin words of the name (in order; in any order only when the code matches too)
	matchAbbrev              // a run of words the short words begin ("SID NACIONAL": Cia Siderurgica Nacional)
	matchWords               // a run of whole words ("BRADESCO": Banco Bradesco S.A.)
	matchPrefix              // the name starts with the short name, at a word's end ("LOCALIZA": Localiza Rent a Car)
	matchEqual               // equal, or equal plus "SA"
)

var levelName = [...]string{"", "generic words left out or initials", "words of the name", "abbreviated words",
	"whole words", "start of the name", "equal name"}

func (l matchLevel) String() string { return levelName[l] }

// shortName is a COTAHIST short name (NOMRES) prepared for matching.
type shortName struct {
	raw   string
	key   string   // normalized
	words []string // normalized words
	core  []string // words without connectors
	bare  []string // words without generic words (nil when none is left or none was dropped)
}

func newShortName(s string) shortName {
	sn := shortName{raw: strings.TrimSpace(s), key: normName(s), words: nameWords(s)}
	sn.core = without(sn.words, connector)
	if b := without(sn.words, generic); len(b) > 0 && len(b) < len(sn.words) {
		sn.bare = b
	}
	return sn
}

// regName is one legal or trading name of a registrant, prepared.
type regName struct {
	key   string
	words []string
	core  []string    // without connectors
	ends  []int       // the length of key after each word: where words end
	until engine.Date // a former name: the day the registrant was renamed (it matches shares that last traded before); NoDate for a current name
}

func newRegName(s string) regName {
	n := regName{key: normName(s), words: nameWords(s), until: engine.NoDate}
	n.core = without(n.words, connector)
	l := 0
	for _, w := range n.words {
		l += len(w)
		n.ends = append(n.ends, l)
	}
	return n
}

// initials are the first letters of the name's words, a corporate "SA"
// written as one word counting as S and A.
func (n *regName) initials() string {
	var b strings.Builder
	for _, w := range n.words {
		if w == "SA" {
			b.WriteString("SA")
			continue
		}
		b.WriteByte(w[0])
	}
	return b.String()
}

// isSubseq reports whether the bytes of sub occur in s in order.
func isSubseq(sub, s string) bool {
	j := 0
	for i := 0; i < len(s) && j < len(sub); i++ {
		if s[i] == sub[j] {
			j++
		}
	}
	return j == len(sub)
}

// level returns how s matches n (code is the issuer code: the ticker's
// root, e.g. BBDC).
func (n *regName) level(s *shortName, code string) matchLevel {
	if l := n.levelOf(s.key, s.words, s.core, code, len(s.raw) >= 12); l != noMatch {
		return l
	}
	if s.bare != nil && n.levelOf(strings.Join(s.bare, ""), s.bare, s.bare, code, false) >= matchContains {
		return matchLoose
	}
	// A corporate form glued to a one-word short name: ATMASA is Atma
	// Participações S.A., PETRORECSA PetroRecôncavo S.A., ATOMPAR Atom
	// Empreendimentos e Participações. The rest, of 4 letters or more,
	// must start the name and end at a word's end, or be of 8 or more.
	if nameRules&ruleGlued != 0 && len(s.words) == 1 {
		for _, suf := range [...]string{"SA", "PAR", "PART"} {
			k := strings.TrimSuffix(s.key, suf)
			if len(k) >= 4 && len(k) < len(s.key) && strings.HasPrefix(n.key, k) && (len(k) >= 8 || slices.Contains(n.ends, len(k))) {
				return matchLoose
			}
		}
	}
	// A trailing BR, B3's abbreviation of Brasil, may be the country of a
	// name that does not say it (GETNET BR: Getnet Adquirência e Serviços):
	// the other words must match as whole words at least, and the name
	// hold the issuer code's letters (PETROBRAS BR, BRDT, is BR
	// Distribuidora, not Petróleo Brasileiro).
	if nameRules&ruleCountry != 0 && len(s.words) >= 2 && s.words[len(s.words)-1] == "BR" && isSubseq(code, n.key) {
		w := s.words[:len(s.words)-1]
		c := without(w, connector)
		if n.levelOf(strings.Join(w, ""), w, c, code, false) >= matchWords {
			return matchLoose
		}
	}
	// Initials, the corporate form included: TAESA is Transmissora
	// Aliança de Energia Elétrica S.A. Only with the code among them.
	if ini := n.initials(); len(s.key) >= 4 && ini != "" && s.key[0] == ini[0] && isSubseq(s.key, ini) && isSubseq(code, ini) {
		return matchLoose
	}
	return noMatch
}

// levelOf is level for a short name's key, words and core words;
// truncated says the short name fills NOMRES's 12 characters, so it may
// end inside a word; so may a key of 8 characters or more ("INFRACOMM":
// Infracommerce), not a shorter one ("BRASIL" is not BrasilAgro).
func (n *regName) levelOf(key string, words, core []string, code string, truncated bool) matchLevel {
	if key == "" || n.key == "" {
		return noMatch
	}
	if n.key == key || n.key == key+"SA" {
		return matchEqual
	}
	if strings.HasPrefix(n.key, key) && (truncated || len(key) >= 8 || slices.Contains(n.ends, len(key))) {
		return matchPrefix
	}
	if len(core) == 0 {
		return noMatch
	}
	if hasRun(n.core, core) {
		return matchWords
	}
	if len(core) < 2 {
		return noMatch // one word is never found abbreviated: "VIA" is not "VIAGENS"
	}
	if runAt(n.core, core, strings.HasPrefix) {
		return matchAbbrev
	}
	// Every word a whole word of the name, or a prefix of one, in another
	// order: LOJAS MARISA is Marisa Lojas S.A.
	if nameRules&ruleAnyOrder != 0 && n.wholeWords(core) {
		return matchContains
	}
	// A run of words, each equal, a prefix or an abbreviation by letters
	// (its first letter and the rest in order: EQTL is EQUATORIAL, INDL
	// INDUSTRIAL), with at least as many equal words, not generic, as
	// abbreviated ones: EQTL PARA is Equatorial Pará Distribuidora de
	// Energia, MANGELS INDL Mangels Industrial.
	if nameRules&ruleAbbrev != 0 && abbrevRun(n.core, core) {
		return matchContains
	}
	// Every short word begins a word of the name, in any order when the
	// name holds the code ("BTGP BANCO": Banco BTG Pactual, BPAC), else in
	// order and of 3 letters or more ("INTER CO" is not International
	// Meal Company).
	if isSubseq(code, n.key) && n.wordStarts(core, false) || longWords(core) && n.wordStarts(core, true) {
		return matchContains
	}
	return noMatch
}

// wholeWords reports whether each of ws, two or more, is a word of the
// name or, of 3 letters or more, a prefix of one (GERDAU MET: Metalúrgica
// Gerdau), with no more prefixes than whole words that are not generic.
func (n *regName) wholeWords(ws []string) bool {
	if len(ws) < 2 {
		return false
	}
	whole, prefix := 0, 0
	for _, w := range ws {
		switch {
		case slices.Contains(n.core, w):
			if !generic[w] {
				whole++
			}
		case len(w) >= 3 && slices.ContainsFunc(n.core, func(c string) bool { return strings.HasPrefix(c, w) }):
			prefix++
		default:
			return false
		}
	}
	return whole > 0 && prefix <= whole
}

// abbrevOf reports whether short abbreviates word by letters: shorter, of
// 3 letters or more, the same first letter and the rest in order.
func abbrevOf(short, word string) bool {
	return len(short) >= 3 && len(short) < len(word) && short[0] == word[0] && isSubseq(short, word)
}

// abbrevRun reports whether run occurs in words as consecutive elements,
// each equal to its word, a prefix of it or an abbreviation of it
// (abbrevOf), one at least an abbreviation that is no prefix, and no more
// of those than equal words that are not generic.
func abbrevRun(words, run []string) bool {
	for i := 0; i+len(run) <= len(words); i++ {
		equal, abbrev, ok := 0, 0, true
		for k, r := range run {
			w := words[i+k]
			switch {
			case w == r:
				if !generic[r] {
					equal++
				}
			case strings.HasPrefix(w, r):
			case abbrevOf(r, w):
				abbrev++
			default:
				ok = false
			}
			if !ok {
				break
			}
		}
		if ok && abbrev > 0 && abbrev <= equal {
			return true
		}
	}
	return false
}

// longWords reports whether every word has 3 characters or more.
func longWords(ws []string) bool {
	for _, w := range ws {
		if len(w) < 3 {
			return false
		}
	}
	return true
}

// wordStarts reports whether each of ws occurs in the name's key at the
// start of one of its words; when ordered, each after the words the one
// before spans.
func (n *regName) wordStarts(ws []string, ordered bool) bool {
	from := 0 // the first word a short word may begin at
	for _, w := range ws {
		found, start := -1, 0
		for i, end := range n.ends {
			if i >= from && strings.HasPrefix(n.key[start:], w) {
				found = i
				break
			}
			start = end
		}
		if found < 0 {
			return false
		}
		if ordered {
			stop := start + len(w)
			from = found
			for from < len(n.ends) && n.ends[from] < stop {
				from++
			}
			from++
		}
	}
	return true
}

// registrant is a company the name rule may link a share to, with what
// the registry says of it.
type registrant struct {
	id     string
	name   string // for the summary
	names  []regName
	rows   []*cvm.CadRow // its registry rows; nil when not from the registry
	status string        // the company's status, used when rows is nil
	legal  [][]string    // its legal names (DENOM_SOCIAL of every row), as legalWords
}

// eligible reports whether a share that traded until day d may be linked
// to r by name: r was an active registrant on d (cvm.CadRow.StatusOn) and
// on the exchange (a row with TP_MERC BOLSA, or in Categoria A, the
// category that may have shares traded on an exchange, or of a category
// that began after d). A registrant not from the registry must be ACTIVE.
func (r *registrant) eligible(d engine.Date) bool {
	if r.rows == nil {
		return r.status == "ACTIVE"
	}
	active, exchange := false, false
	for _, row := range r.rows {
		if st, _ := row.StatusOn(d); st == "ACTIVE" {
			active = true
		}
		if row.Market == "BOLSA" || row.CategoryOn(d) == "Categoria A" || row.Category != "" && row.CategoryOn(d) == "" {
			exchange = true
		}
	}
	return active && exchange
}

// market ranks the registry's TP_MERC: 2 the exchange (BOLSA) in some
// row, 1 not stated, 0 only an over-the-counter market.
func (r *registrant) market() int {
	if r.rows == nil {
		return 1
	}
	m := 0
	for _, row := range r.rows {
		switch row.Market {
		case "BOLSA":
			return 2
		case "":
			m = 1
		}
	}
	return m
}

// extra counts the words of name n that a short name does not account
// for (generic words aside): the fewer, the closer the name.
func (n *regName) extra(s *shortName) int {
	c := 0
	for _, w := range n.words {
		if generic[w] {
			continue
		}
		covered := false
		for _, sw := range s.words {
			if strings.HasPrefix(w, sw) || strings.HasPrefix(sw, w) {
				covered = true
				break
			}
		}
		if !covered {
			c++
		}
	}
	return c
}

// nameIndex finds, for the issuer code and short name of a share, the
// registrant it belongs to by name alone (see resolve).
type nameIndex struct {
	regs []registrant
}

// newNameIndex indexes the companies of kind COMPANY among cos (funds and
// BDR issuers are never found by name) with their registry rows (rows may
// be nil: then each company's status stands for them).
func newNameIndex(cos map[string]*engine.Company, rows []cvm.CadRow) *nameIndex {
	byID := map[string][]*cvm.CadRow{}
	for i := range rows {
		byID[rows[i].Company.ID] = append(byID[rows[i].Company.ID], &rows[i])
	}
	ids := make([]string, 0, len(cos))
	for id, c := range cos {
		if c.Kind == engine.KindCompany {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	ix := &nameIndex{regs: make([]registrant, 0, len(ids))}
	for _, id := range ids {
		c := cos[id]
		r := registrant{id: id, name: c.Name, rows: byID[id], status: c.Status}
		seen := map[string]bool{}
		add := func(s string) {
			if k := normName(s); k != "" && !seen[k] {
				seen[k] = true
				r.names = append(r.names, newRegName(s))
			}
		}
		add(c.TradingName)
		add(c.Name)
		r.addLegal(c.Name)
		for _, row := range r.rows {
			add(row.Company.TradingName)
			add(row.Company.Name)
			r.addLegal(row.Company.Name)
		}
		ix.regs = append(ix.regs, r)
	}
	return ix
}

// addFormer adds the former names the FCA's geral rows give
// (Nome_Empresarial_Anterior, renamed on Data_Nome_Empresarial) to their
// registrants: a share that last traded before the rename is found by
// the name it had then (DURATEX was Duratex S.A., Dexco since 2021). A
// former name without its date is left out: when it held is unknown.
func (ix *nameIndex) addFormer(rows []cvm.GeneralRow) int {
	if nameRules&ruleFormer == 0 {
		return 0
	}
	byID := make(map[string]*registrant, len(ix.regs))
	for i := range ix.regs {
		byID[ix.regs[i].id] = &ix.regs[i]
	}
	added := 0
	for _, g := range rows {
		r := byID[g.CompanyID]
		if r == nil || g.FormerName == "" || !g.NameSince.Valid() {
			continue
		}
		n := newRegName(g.FormerName)
		if n.key == "" {
			continue
		}
		n.until = g.NameSince
		dup := false
		for k := range r.names {
			if m := &r.names[k]; m.key == n.key {
				// A current name, or the same former one: the later rename.
				if m.until.Valid() && n.until > m.until {
					m.until = n.until
				}
				dup = true
				break
			}
		}
		if !dup {
			r.names = append(r.names, n)
			added++
		}
	}
	return added
}

// candidate is a registrant a short name matches, with its rank.
type candidate struct {
	reg    *registrant
	level  matchLevel
	code   bool // the issuer code's letters occur in order in one of its names
	market int
	extra  int
}

// cmp orders candidates best first: a name equal to the short name (the
// issuer's own name; a sibling of another line of business only starts
// with it: BANRISUL is Banrisul S/A, not Banrisul Armazéns Gerais), then
// the issuer code found in the name, then fewer words left unaccounted
// for (Bradesco's leasing arm adds LEASING ARRENDAMENTO MERCANTIL to its
// name), then the closer match, then on the exchange.
func (c *candidate) cmp(o *candidate) int {
	return cmp.Or(-cmpBool(c.level == matchEqual, o.level == matchEqual), -cmpBool(c.code, o.code), cmp.Compare(c.extra, o.extra),
		-cmp.Compare(c.level, o.level), -cmp.Compare(c.market, o.market))
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// nameQuery is the name rule's question for one issuer code (a ticker
// root): its short name and the last session any of its shares traded.
type nameQuery struct {
	code  string
	short string
	last  engine.Date
}

// nameAnswer is the name rule's answer for one issuer code.
type nameAnswer struct {
	id    string      // the registrant; "" when none or ambiguous
	cand  *candidate  // the chosen candidate
	tied  []candidate // the candidates left tied when ambiguous
	level matchLevel
}

// candidates returns every eligible registrant q's short name matches,
// best first (candidate.cmp, then company_id).
func (ix *nameIndex) candidates(q nameQuery) []candidate {
	s := newShortName(q.short)
	if len(s.key) < 2 {
		return nil
	}
	var out []candidate
	for i := range ix.regs {
		r := &ix.regs[i]
		lv, code, extra := noMatch, false, 0
		for k := range r.names {
			n := &r.names[k]
			if n.until.Valid() && q.last >= n.until {
				continue // a former name, for shares that traded before the rename
			}
			l := n.level(&s, q.code)
			if l == noMatch {
				continue
			}
			// The closest of the names matching best.
			if e := n.extra(&s); l > lv || l == lv && e < extra {
				lv, extra = l, e
			}
			if isSubseq(q.code, n.key) {
				code = true
			}
		}
		if lv == noMatch || !r.eligible(q.last) {
			continue
		}
		out = append(out, candidate{reg: r, level: lv, code: code, market: r.market(), extra: extra})
	}
	slices.SortStableFunc(out, func(a, b candidate) int { return a.cmp(&b) })
	return out
}

// resolve answers every query (by code):
//
//  1. Each query's candidates are the eligible registrants its short name
//     matches (candidates), best first; a query whose best candidate is
//     strictly better than the next is linked to it.
//  2. A registrant so linked is taken out of the tied candidates of the
//     other queries ("BRASIL" ties Banco do Brasil with Banco ABC Brasil;
//     "ABC BRASIL" is the latter's), and step 1 is tried again, until
//     nothing changes.
//  3. What is still tied is ambiguous: left unlinked, with its tie.
func (ix *nameIndex) resolve(qs []nameQuery) map[string]nameAnswer {
	cands := make([][]candidate, len(qs))
	out := make(map[string]nameAnswer, len(qs))
	claimed := map[string]string{} // registrant -> code that took it
	decide := func(i int) bool {
		c := cands[i]
		if len(c) == 0 {
			out[qs[i].code] = nameAnswer{}
			return true
		}
		if len(c) == 1 || c[0].cmp(&c[1]) < 0 {
			out[qs[i].code] = nameAnswer{id: c[0].reg.id, cand: &c[0], level: c[0].level}
			if _, ok := claimed[c[0].reg.id]; !ok {
				claimed[c[0].reg.id] = qs[i].code
			}
			return true
		}
		return false
	}
	pending := []int{}
	for i, q := range qs {
		cands[i] = ix.candidates(q)
		if !decide(i) {
			pending = append(pending, i)
		}
	}
	for changed := true; changed && len(pending) > 0; {
		changed = false
		next := pending[:0]
		for _, i := range pending {
			kept := cands[i][:0:0]
			for _, c := range cands[i] {
				if by, ok := claimed[c.reg.id]; !ok || by == qs[i].code {
					kept = append(kept, c)
				}
			}
			if len(kept) < len(cands[i]) {
				cands[i] = kept
				changed = true
				if decide(i) {
					continue
				}
			}
			next = append(next, i)
		}
		pending = next
	}
	for _, i := range pending {
		c := cands[i]
		n := 1
		for n < len(c) && c[0].cmp(&c[n]) == 0 {
			n++
		}
		out[qs[i].code] = nameAnswer{tied: c[:n], level: c[0].level}
	}
	return out
}

// describe is a candidate as the summary lists it: "ID NAME [STATUS]".
func (c *candidate) describe(status string) string {
	return fmt.Sprintf("%s %s [%s]", c.reg.id, c.reg.name, statusOrUnknown(status))
}

// legalWords are a legal name's words as sameLegalName compares them:
// normalized, connectors left out, a corporate form written in two words
// ("S.A.", "S/A") joined into SA, and a corporate form at the end (SA,
// LTDA) left out.
func legalWords(s string) []string {
	w := without(nameWords(s), connector)
	out := make([]string, 0, len(w))
	for i := 0; i < len(w); i++ {
		if w[i] == "S" && i+1 < len(w) && w[i+1] == "A" {
			out = append(out, "SA")
			i++
			continue
		}
		out = append(out, w[i])
	}
	for len(out) > 1 && (out[len(out)-1] == "SA" || out[len(out)-1] == "LTDA") {
		out = out[:len(out)-1]
	}
	return out
}

// sameLegalName reports whether b, a legal name as B3 spells it, is r, as
// the CVM registry does (both as legalWords): word for word, each equal or
// b's an abbreviation of r's: shorter, of two letters or more, the same
// first letter and the rest of its letters in order (BCO is BANCO, CIA
// COMPANHIA, ELET ELETRICAS, PART PARTICIPACOES). An abbreviation can
// fit another word too (CIA fits CAPITAL, VIA fits VITTIA), so at least
// as many words as are abbreviated, one at least, must be equal and not
// generic (BRADESCO in BCO BRADESCO), and byLegalName wants one
// registrant only.
func sameLegalName(b, r []string) bool {
	if len(b) == 0 || len(b) != len(r) {
		return false
	}
	equal, short := 0, 0
	for i := range b {
		if b[i] == r[i] {
			if !generic[b[i]] {
				equal++
			}
			continue
		}
		if len(b[i]) < 2 || len(b[i]) >= len(r[i]) || b[i][0] != r[i][0] || !isSubseq(b[i], r[i]) {
			return false
		}
		short++
	}
	return equal > 0 && short <= equal
}

func (r *registrant) addLegal(name string) {
	w := legalWords(name)
	if len(w) == 0 {
		return
	}
	for _, l := range r.legal {
		if slices.Equal(l, w) {
			return
		}
	}
	r.legal = append(r.legal, w)
}

// byLegalName returns the one registrant eligible on day d (registrant.eligible)
// one of whose legal names is name as B3 spells it (sameLegalName); "" and
// the number of such registrants when there is not exactly one.
func (ix *nameIndex) byLegalName(name string, d engine.Date) (id string, n int) {
	b := legalWords(name)
	if len(b) == 0 {
		return "", 0
	}
	for i := range ix.regs {
		r := &ix.regs[i]
		for _, l := range r.legal {
			if sameLegalName(b, l) {
				if r.eligible(d) {
					id, n = r.id, n+1
				}
				break
			}
		}
	}
	if n != 1 {
		return "", n
	}
	return id, 1
}
