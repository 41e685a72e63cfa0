package cvm

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/sectors"
)

// CadRow is one row of cad_cia_aberta.csv: the Company it describes plus
// the registry fields the engine model has no place for.
type CadRow struct {
	Company         engine.Company
	SectorName      string      // SETOR_ATIV, "" when blank
	Situation       string      // SIT as written (ATIVO, CANCELADA, SUSPENSO(A) - ...)
	SituationDate   engine.Date // DT_INI_SIT
	RegistryDate    engine.Date // DT_REG: registration at the CVM
	CancelDate      engine.Date // DT_CANCEL
	CancelReason    string      // MOTIVO_CANCEL
	Market          string      // TP_MERC
	Category        string      // CATEG_REG (Categoria A, Categoria B)
	CategorySince   engine.Date // DT_INI_CATEG: when the category began
	IssuerSituation string      // SIT_EMISSOR (FASE OPERACIONAL...)
	Control         string      // CONTROLE_ACIONARIO (PRIVADO, ESTATAL...)
	Email           string      // EMAIL
	Auditor         string      // AUDITOR
}

// fold maps Portuguese accented letters to ASCII.
func fold(r rune) rune {
	switch r {
	case 'á', 'à', 'â', 'ã', 'ä', 'ª':
		return 'a'
	case 'Á', 'À', 'Â', 'Ã', 'Ä':
		return 'A'
	case 'é', 'è', 'ê', 'ë':
		return 'e'
	case 'É', 'È', 'Ê', 'Ë':
		return 'E'
	case 'í', 'ì', 'î', 'ï':
		return 'i'
	case 'Í', 'Ì', 'Î', 'Ï':
		return 'I'
	case 'ó', 'ò', 'ô', 'õ', 'ö', 'º':
		return 'o'
	case 'Ó', 'Ò', 'Ô', 'Õ', 'Ö':
		return 'O'
	case 'ú', 'ù', 'û', 'ü':
		return 'u'
	case 'Ú', 'Ù', 'Û', 'Ü':
		return 'U'
	case 'ç':
		return 'c'
	case 'Ç':
		return 'C'
	case 'ñ':
		return 'n'
	case 'Ñ':
		return 'N'
	}
	return r
}

// Status maps a registry situation (SIT) to ACTIVE, CANCELLED or
// SUSPENDED; ok is false for an unknown value.
func Status(sit string) (status string, ok bool) {
	s := strings.ToUpper(strings.TrimSpace(sit))
	switch {
	case s == "ATIVO" || s == "ATIVA":
		return "ACTIVE", true
	case strings.HasPrefix(s, "CANCELAD"):
		return "CANCELLED", true
	case strings.HasPrefix(s, "SUSPENS"):
		return "SUSPENDED", true
	}
	return "", false
}

// CVMCode normalises a CVM code ("025496" in DFP files, "25496" in the
// registry) to its digits without leading zeros.
func CVMCode(b []byte) string {
	d := Digits(b)
	d = strings.TrimLeft(d, "0")
	if d == "" && len(b) > 0 {
		return "0"
	}
	return d
}

// ReadCadRows reads every row of a cad_cia_aberta.csv file, in file
// order. Company.ID is the CNPJ's 14 digits (the CVM code when the CNPJ is
// blank), Kind is KindCompany, Employees -1, FreeFloat Null, IPODate
// NoDate, Symbol "" (the registry has no ticker: listings fill it).
// Required columns: CNPJ_CIA, DENOM_SOCIAL, SIT, CD_CVM.
func ReadCadRows(r io.Reader, name string, opt Options) ([]CadRow, error) {
	rd, err := opt.Open(r, name)
	if err != nil {
		return nil, err
	}
	req, err := rd.requireAll("CNPJ_CIA", "DENOM_SOCIAL", "SIT", "CD_CVM")
	if err != nil {
		return nil, err
	}
	cCNPJ, cName, cSit, cCode := req[0], req[1], req[2], req[3]
	cComerc := rd.Col("DENOM_COMERC")
	cReg, cConst, cCancel, cMotivo := rd.Col("DT_REG"), rd.Col("DT_CONST"), rd.Col("DT_CANCEL"), rd.Col("MOTIVO_CANCEL")
	cIniSit, cSetor, cMerc, cCateg := rd.Col("DT_INI_SIT"), rd.Col("SETOR_ATIV"), rd.Col("TP_MERC"), rd.Col("CATEG_REG")
	cIniCateg := rd.Col("DT_INI_CATEG")
	cSitEm, cCtrl := rd.Col("SIT_EMISSOR"), rd.Col("CONTROLE_ACIONARIO")
	cLog, cCompl, cBairro, cMun, cUF, cPais, cCEP := rd.Col("LOGRADOURO"), rd.Col("COMPL"), rd.Col("BAIRRO"),
		rd.Col("MUN"), rd.Col("UF"), rd.Col("PAIS"), rd.Col("CEP")
	cEmail, cAud := rd.Col("EMAIL"), rd.Col("AUDITOR")

	cols := cadCols{cCNPJ, cName, cSit, cCode, cComerc, cReg, cConst, cCancel, cMotivo,
		cIniSit, cSetor, cMerc, cCateg, cIniCateg, cSitEm, cCtrl, cLog, cCompl, cBairro, cMun, cUF, cPais, cCEP, cEmail, cAud,
		map[string]string{}}
	var out []CadRow
	err = opt.EachRow(rd, func() error {
		row, err := cadRow(rd, &cols)
		if err == nil {
			out = append(out, row)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

type cadCols struct {
	cnpj, name, sit, code, comerc, reg, cons, cancel, motivo, iniSit, setor, merc, categ, iniCateg, sitEm, ctrl,
	log, compl, bairro, mun, uf, pais, cep, email, aud int
	sectors map[string]string // SETOR_ATIV -> sub-industry id ("" unmapped)
}

func (c *cadCols) sectorID(name string) string {
	id, ok := c.sectors[name]
	if !ok {
		id, _ = sectors.FromCVM(name)
		c.sectors[name] = id
	}
	return id
}

func cadRow(rd *Reader, c *cadCols) (CadRow, error) {
	var row CadRow
	code := CVMCode(rd.Field(c.code))
	id := ""
	if len(rd.Field(c.cnpj)) > 0 {
		var err error
		if id, err = cnpj(rd.Field(c.cnpj)); err != nil {
			return row, rd.Errorf(c.cnpj, "%v", err)
		}
	} else if code != "" {
		id = code
	} else {
		return row, rd.Errorf(c.cnpj, "neither CNPJ nor CVM code")
	}
	row.Situation = rd.String(c.sit)
	status, ok := Status(row.Situation)
	if !ok {
		return row, rd.Errorf(c.sit, "unknown situation %q", row.Situation)
	}
	dates := []struct {
		col int
		dst *engine.Date
	}{{c.reg, &row.RegistryDate}, {c.cons, &row.Company.FoundingDate}, {c.cancel, &row.CancelDate}, {c.iniSit, &row.SituationDate},
		{c.iniCateg, &row.CategorySince}}
	for _, d := range dates {
		v, err := ParseDate(rd.Field(d.col))
		if err != nil {
			return row, rd.Errorf(d.col, "%v: %q", err, rd.Field(d.col))
		}
		*d.dst = v
	}
	row.SectorName = rd.String(c.setor)
	row.CancelReason = rd.String(c.motivo)
	row.Market = rd.String(c.merc)
	row.Category = rd.String(c.categ)
	row.IssuerSituation = rd.String(c.sitEm)
	row.Control = rd.String(c.ctrl)
	row.Email = rd.String(c.email)
	row.Auditor = rd.String(c.aud)
	co := &row.Company
	co.ID = id
	co.CVMCode = code
	co.Name = rd.String(c.name)
	co.TradingName = rd.String(c.comerc)
	co.Kind = engine.KindCompany
	co.SubIndustryID = c.sectorID(row.SectorName)
	co.Employees = -1
	co.FreeFloat = engine.Null
	co.IPODate = engine.NoDate
	co.Status = status
	co.StatusDate = row.SituationDate
	if status == "CANCELLED" && row.CancelDate.Valid() {
		co.StatusDate = row.CancelDate
	}
	co.Address = engine.Address{
		Line1:      rd.String(c.log),
		Line2:      joinNonEmpty(" - ", rd.String(c.compl), rd.String(c.bairro)),
		City:       rd.String(c.mun),
		State:      rd.String(c.uf),
		PostalCode: postalCode(rd.Field(c.cep)),
		Country:    rd.String(c.pais),
	}
	return row, nil
}

func joinNonEmpty(sep string, parts ...string) string {
	var keep []string
	for _, p := range parts {
		if p != "" {
			keep = append(keep, p)
		}
	}
	return strings.Join(keep, sep)
}

// postalCode formats a CEP as 00000-000; the registry drops leading
// zeros ("4711130" is 04711-130). Anything that is not 1..8 digits is kept
// as written.
func postalCode(b []byte) string {
	d := Digits(b)
	if d == "" || len(d) > 8 || len(d) != len(b) {
		return string(b)
	}
	d = strings.Repeat("0", 8-len(d)) + d
	return d[:5] + "-" + d[5:]
}

// ReadCad reads a cad_cia_aberta.csv file into companies (one per
// company_id, sorted by it), each placed on the sub-industry its SETOR_ATIV
// maps to (package sectors; "" when blank or unmapped), and returns the
// distinct SETOR_ATIV values the mapping lacks, sorted. The registry lists
// some CNPJs several times (re-registrations); the row kept is the best by
// situation (ACTIVE, then SUSPENDED, then CANCELLED), then the latest
// DT_INI_SIT, then the latest DT_REG, then the highest CVM code.
func ReadCad(r io.Reader, name string, opt Options) (comps []engine.Company, unmapped []string, err error) {
	rows, err := ReadCadRows(r, name, opt)
	if err != nil {
		return nil, nil, err
	}
	comps, unmapped = Companies(rows)
	return comps, unmapped, nil
}

// Companies reduces registry rows to one Company per ID (see ReadCad) and
// lists the SETOR_ATIV values of the kept rows that map to no sub-industry.
func Companies(rows []CadRow) (comps []engine.Company, unmapped []string) {
	best := make(map[string]int, len(rows))
	for i := range rows {
		id := rows[i].Company.ID
		j, ok := best[id]
		if !ok || better(&rows[i], &rows[j]) {
			best[id] = i
		}
	}
	comps = make([]engine.Company, 0, len(best))
	seen := map[string]bool{}
	for _, i := range best {
		comps = append(comps, rows[i].Company)
		if n := rows[i].SectorName; n != "" && rows[i].Company.SubIndustryID == "" && !seen[n] {
			seen[n] = true
			unmapped = append(unmapped, n)
		}
	}
	sort.Slice(comps, func(a, b int) bool { return comps[a].ID < comps[b].ID })
	sort.Strings(unmapped)
	return comps, unmapped
}

func statusRank(s string) int {
	switch s {
	case "ACTIVE":
		return 3
	case "SUSPENDED":
		return 2
	}
	return 1
}

// better reports whether a should be kept over b for the same ID.
func better(a, b *CadRow) bool {
	if ra, rb := statusRank(a.Company.Status), statusRank(b.Company.Status); ra != rb {
		return ra > rb
	}
	if a.SituationDate != b.SituationDate {
		return a.SituationDate > b.SituationDate
	}
	if a.RegistryDate != b.RegistryDate {
		return a.RegistryDate > b.RegistryDate
	}
	if len(a.Company.CVMCode) != len(b.Company.CVMCode) {
		return len(a.Company.CVMCode) > len(b.Company.CVMCode)
	}
	if a.Company.CVMCode != b.Company.CVMCode {
		return a.Company.CVMCode > b.Company.CVMCode
	}
	return fmt.Sprint(a.Company) < fmt.Sprint(b.Company)
}
