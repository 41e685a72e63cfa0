package demo

import (
	"math/rand/v2"
	"strings"
	"unicode"
)

// Invented proper names are built from Tupi-like and Portuguese syllables,
// so they read as Brazilian without naming a real company.
var (
	nameHeads = []string{"Ita", "Gua", "Pira", "Jacu", "Mara", "Ara", "Buri", "Cae", "Ibi", "Juru",
		"Tupi", "Caju", "Piraí", "Ipo", "Una", "Itá", "Xeré", "Bacu", "Cori", "Tama", "Jaca", "Uba",
		"Poti", "Aimo", "Camo", "Ibira", "Anda", "Bore", "Cumbu", "Taqua", "Jupa", "Mucu", "Pore"}
	nameTails = []string{"tiba", "tuba", "rana", "pema", "guaçu", "mirim", "poã", "cema", "juba",
		"rapé", "tinga", "baré", "quara", "nema", "paba", "coara", "ruba", "lema", "vera", "tã",
		"pora", "rema", "buna", "cuí", "tanga", "raí", "piá"}
	nameWords = []string{"Aurora", "Alvorada", "Horizonte", "Planalto", "Atlântica", "Cerrado", "Serrana",
		"Litorânea", "Meridional", "Boreal", "Austral", "Continental", "Nacional", "Paulista", "Mineira",
		"Sertaneja", "Pampeana", "Amazônica", "Guanabara", "Central", "Pioneira", "Vanguarda", "Estrela",
		"Cruzeiro", "Bandeirante", "Capixaba", "Potiguar", "Fluminense", "Gaúcha", "Baiana", "Tropical",
		"Imperial", "Colonial", "Ventura", "Primavera", "Montanha", "Rio Claro", "Boa Vista", "Três Rios",
		"Vale Verde", "Serra Azul", "Ponta Alta", "Campo Belo", "Lagoa Nova", "Pedra Branca", "Porto Real"}
	firstNames = []string{"Ana", "Beatriz", "Carlos", "Daniela", "Eduardo", "Fernanda", "Gustavo", "Helena",
		"Igor", "Juliana", "Luís", "Mariana", "Nelson", "Olívia", "Paulo", "Renata", "Sérgio", "Tatiana",
		"Vinícius", "Yara", "Rodrigo", "Camila", "André", "Patrícia", "Marcelo", "Luciana", "Rafael",
		"Cristina", "Fábio", "Adriana", "Henrique", "Sílvia", "Otávio", "Márcia", "Rogério", "Débora"}
	lastNames = []string{"Almeida", "Barbosa", "Cardoso", "Duarte", "Esteves", "Figueiredo", "Guimarães",
		"Holanda", "Junqueira", "Lacerda", "Macedo", "Nogueira", "Queiroz", "Rezende", "Sampaio",
		"Teixeira", "Valadares", "Xavier", "Brandão", "Coutinho", "Falcão", "Magalhães", "Pacheco",
		"Siqueira", "Toledo", "Vasconcelos", "Moura", "Prado", "Leme", "Arruda", "Bittencourt", "Campos"}
	streets = []string{"Avenida das Nações", "Rua das Palmeiras", "Avenida Atlântica Sul", "Rua dos Ipês",
		"Avenida do Contorno Leste", "Rua Jacarandá", "Alameda dos Bandeirantes", "Avenida Beira-Rio",
		"Rua Sete de Setembro Norte", "Avenida Industrial", "Rua do Comércio Velho", "Avenida Paralela Oeste"}
	districts = []string{"Centro", "Vila Nova", "Jardim América", "Distrito Industrial", "Bela Vista",
		"Boa Viagem", "Savassi", "Batel", "Moinhos", "Pituba", "Meireles", "Praia do Canto"}
)

// city is a Brazilian city with the first digits of its postal codes.
type city struct{ name, state, cep string }

var cities = []city{
	{"São Paulo", "SP", "01"}, {"São Paulo", "SP", "04"}, {"Rio de Janeiro", "RJ", "20"},
	{"Rio de Janeiro", "RJ", "22"}, {"Belo Horizonte", "MG", "30"}, {"Curitiba", "PR", "80"},
	{"Porto Alegre", "RS", "90"}, {"Recife", "PE", "50"}, {"Salvador", "BA", "40"},
	{"Fortaleza", "CE", "60"}, {"Campinas", "SP", "13"}, {"Florianópolis", "SC", "88"},
	{"Vitória", "ES", "29"}, {"Goiânia", "GO", "74"}, {"Manaus", "AM", "69"}, {"Belém", "PA", "66"},
	{"Joinville", "SC", "89"}, {"Barueri", "SP", "06"}, {"Brasília", "DF", "70"}, {"Ribeirão Preto", "SP", "14"},
}

// foreignPlaces are addresses of foreign BDR issuers.
var foreignPlaces = []struct{ city, state, country string }{
	{"Wilmington", "DE", "Estados Unidos"}, {"Cupertino", "CA", "Estados Unidos"}, {"Austin", "TX", "Estados Unidos"},
	{"Nova York", "NY", "Estados Unidos"}, {"Dublin", "", "Irlanda"}, {"Amsterdã", "", "Países Baixos"},
	{"Luxemburgo", "", "Luxemburgo"}, {"Toronto", "ON", "Canadá"}, {"Londres", "", "Reino Unido"},
	{"Zurique", "", "Suíça"}, {"Tóquio", "", "Japão"}, {"Santiago", "", "Chile"},
}

// foreignHeads, foreignTails and foreignSuffix make the names of foreign
// issuers (English-sounding, invented; see foreignWord).
var foreignHeads = []string{"Nor", "Vex", "Quan", "Lum", "Stra", "Kel", "Orb", "Zen", "Ardo", "Bry", "Cal", "Dax", "Fen", "Gryph", "Hal", "Jov", "Lyr", "Mor", "Nyx", "Pell"}
var foreignTails = []string{"tek", "ion", "ara", "ex", "ant", "ify", "ora", "is", "ium", "wave", "gate", "ridge", "stone", "field", "corp", "nova"}
var foreignSuffix = []string{"Inc.", "Corp.", "Holdings Inc.", "plc", "N.V.", "Group Ltd.", "S.A.", "AG"}

// sectorNouns gives the business noun used in company names per tag.
var sectorNouns = map[string][]string{
	"oil":        {"Petróleo", "Energia", "Óleo e Gás", "Combustíveis"},
	"agro":       {"Agroindustrial", "Agrícola", "Bioenergia", "Açúcar e Álcool"},
	"mat":        {"Mineração", "Siderúrgica", "Química", "Papel e Celulose", "Metalúrgica", "Embalagens"},
	"ind":        {"Máquinas", "Engenharia", "Logística", "Transportes", "Equipamentos", "Concessões"},
	"cons":       {"Alimentos", "Bebidas", "Laticínios", "Supermercados", "Cosméticos", "Frigorífico"},
	"realestate": {"Incorporadora", "Empreendimentos", "Construtora", "Shopping Centers", "Imóveis"},
	"cyc":        {"Magazine", "Calçados", "Têxtil", "Autopeças", "Hotéis", "Educacional", "Lojas"},
	"health":     {"Saúde", "Diagnósticos", "Hospitalar", "Farma", "Drogarias"},
	"tech":       {"Sistemas", "Tecnologia", "Digital", "Software", "Dados"},
	"comm":       {"Telecom", "Comunicações", "Mídia", "Conectividade"},
	"elec":       {"Energia", "Elétrica", "Geração", "Transmissora", "Energias Renováveis"},
	"water":      {"Saneamento", "Águas", "Ambiental"},
	"gas":        {"Gás", "Gás Natural"},
	"bank":       {"Banco"},
	"fin":        {"Participações", "Pagamentos", "Investimentos", "Financeira", "Securitizadora"},
	"ins":        {"Seguros", "Seguradora", "Previdência", "Resseguros"},
}

// inventedWord returns a proper noun such as "Itatiba" or "Jurupema".
func inventedWord(r *rand.Rand) string {
	h := nameHeads[r.IntN(len(nameHeads))]
	t := nameTails[r.IntN(len(nameTails))]
	return deAccent(h) + t
}

// foreignWord returns an invented English-sounding brand.
func foreignWord(r *rand.Rand) string {
	return foreignHeads[r.IntN(len(foreignHeads))] + foreignTails[r.IntN(len(foreignTails))]
}

// personName returns an invented full name.
func personName(r *rand.Rand) string {
	return firstNames[r.IntN(len(firstNames))] + " " + lastNames[r.IntN(len(lastNames))] + " " + lastNames[r.IntN(len(lastNames))]
}

var accentMap = map[rune]rune{'á': 'a', 'à': 'a', 'â': 'a', 'ã': 'a', 'é': 'e', 'ê': 'e', 'í': 'i', 'ó': 'o',
	'ô': 'o', 'õ': 'o', 'ú': 'u', 'ü': 'u', 'ç': 'c', 'Á': 'A', 'Â': 'A', 'Ã': 'A', 'É': 'E', 'Ê': 'E',
	'Í': 'I', 'Ó': 'O', 'Ô': 'O', 'Õ': 'O', 'Ú': 'U', 'Ç': 'C'}

// deAccent strips Portuguese diacritics.
func deAccent(s string) string {
	var b strings.Builder
	for _, c := range s {
		if m, ok := accentMap[c]; ok {
			c = m
		}
		b.WriteRune(c)
	}
	return b.String()
}

// letters returns the upper-case ASCII letters of s, accents stripped.
func letters(s string) string {
	var b strings.Builder
	for _, c := range deAccent(s) {
		if unicode.IsLetter(c) && c < 128 {
			b.WriteRune(unicode.ToUpper(c))
		}
	}
	return b.String()
}

// slug returns a lower-case ASCII identifier of s for web addresses.
func slug(s string) string { return strings.ToLower(letters(s)) }

// pickRoot chooses a new 4-letter root symbol derived from words, not used
// before and not a root of a real listed company.
func pickRoot(r *rand.Rand, words []string, used map[string]bool) string {
	var cands []string
	a := letters(words[0])
	b := ""
	if len(words) > 1 {
		b = letters(words[1])
	}
	if len(a) >= 3 && b != "" {
		cands = append(cands, a[:3]+b[:1])
	}
	if len(a) >= 4 {
		cands = append(cands, a[:4])
	}
	if len(a) >= 2 && len(b) >= 2 {
		cands = append(cands, a[:2]+b[:2])
	}
	if len(a) >= 5 {
		cands = append(cands, a[:3]+a[4:5], a[:2]+a[3:5])
	}
	for _, c := range cands {
		if len(c) == 4 && !used[c] && !realRoots[c] {
			used[c] = true
			return c
		}
	}
	for {
		var c [4]byte
		c[0] = 'A' + byte(r.IntN(26))
		if len(a) > 0 {
			c[0] = a[0]
		}
		for i := 1; i < 4; i++ {
			c[i] = 'A' + byte(r.IntN(26))
		}
		s := string(c[:])
		if !used[s] && !realRoots[s] {
			used[s] = true
			return s
		}
	}
}
