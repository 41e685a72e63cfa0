package cvm

import (
	"archive/zip"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/pregao/pregao/engine"
)

// GeneralRow is one row of the FCA geral table
// (fca_cia_aberta_geral_YYYY.csv): a company's general registration
// data as declared in one version of its FCA.
type GeneralRow struct {
	CompanyID     string      // CNPJ digits (CNPJ_Companhia)
	ReferenceDate engine.Date // Data_Referencia
	Version       int         // Versao
	Name          string      // Nome_Empresarial
	NameSince     engine.Date // Data_Nome_Empresarial: when Name took effect; NoDate if not stated
	FormerName    string      // Nome_Empresarial_Anterior: the name before; "" if none
	CVMCode       string      // Codigo_CVM without leading zeros
	FoundingDate  engine.Date // Data_Constituicao
	Sector        string      // Setor_Atividade
	Description   string      // Descricao_Atividade
	Website       string      // Pagina_Web
}

// ReadFCAGeral reads an FCA geral table, rows in file order. Required
// columns: CNPJ_Companhia, Data_Referencia, Versao.
func ReadFCAGeral(r io.Reader, name string, opt Options) ([]GeneralRow, error) {
	rd, err := opt.Open(r, name)
	if err != nil {
		return nil, err
	}
	c, err := rd.requireAll("CNPJ_Companhia", "Data_Referencia", "Versao")
	if err != nil {
		return nil, err
	}
	cName, cCode, cConst := rd.Col("Nome_Empresarial"), rd.Col("Codigo_CVM"), rd.Col("Data_Constituicao")
	cSince, cFormer := rd.Col("Data_Nome_Empresarial"), rd.Col("Nome_Empresarial_Anterior")
	cSetor, cDesc, cWeb := rd.Col("Setor_Atividade"), rd.Col("Descricao_Atividade"), rd.Col("Pagina_Web")
	var out []GeneralRow
	err = opt.EachRow(rd, func() error {
		var g GeneralRow
		var err error
		if g.CompanyID, g.ReferenceDate, g.Version, err = filingKey(rd, c); err != nil {
			return err
		}
		if g.FoundingDate, err = ParseDate(rd.Field(cConst)); err != nil {
			return rd.Errorf(cConst, "%v: %q", err, rd.Field(cConst))
		}
		if g.NameSince, err = ParseDate(rd.Field(cSince)); err != nil {
			return rd.Errorf(cSince, "%v: %q", err, rd.Field(cSince))
		}
		g.Name = rd.String(cName)
		g.FormerName = rd.String(cFormer)
		g.CVMCode = CVMCode(rd.Field(cCode))
		g.Sector = rd.String(cSetor)
		g.Description = rd.String(cDesc)
		g.Website = rd.String(cWeb)
		out = append(out, g)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ApplyGeneral completes companies from their latest FCA geral row
// (highest Data_Referencia, then Versao): Website and Description where
// they are empty, FoundingDate where it is NoDate. It modifies companies
// in place.
func ApplyGeneral(companies []engine.Company, rows []GeneralRow) {
	best := map[string]*GeneralRow{}
	for i := range rows {
		g := &rows[i]
		b, ok := best[g.CompanyID]
		if !ok || g.ReferenceDate > b.ReferenceDate || (g.ReferenceDate == b.ReferenceDate && g.Version > b.Version) {
			best[g.CompanyID] = g
		}
	}
	for i := range companies {
		c := &companies[i]
		g, ok := best[c.ID]
		if !ok {
			continue
		}
		if c.Website == "" {
			c.Website = g.Website
		}
		if c.Description == "" {
			c.Description = g.Description
		}
		if !c.FoundingDate.Valid() {
			c.FoundingDate = g.FoundingDate
		}
	}
}

// FCA is what a yearly FCA archive (fca_cia_aberta_YYYY.zip) holds of
// use here.
type FCA struct {
	Listings  []Listing    // valor_mobiliario
	Addresses []AddressRow // endereco
	General   []GeneralRow // geral
	Index     []DocEntry   // fca_cia_aberta_YYYY.csv
}

// ReadFCAZip reads a yearly FCA archive: the valor_mobiliario, endereco
// and geral tables and the filing index; other members are counted in
// Stats.Unused.
func ReadFCAZip(p string, opt Options) (*FCA, error) {
	zr, err := zip.OpenReader(p)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	defer zr.Close()
	out := &FCA{}
	for _, zf := range zr.File {
		base := strings.ToLower(path.Base(zf.Name))
		rest, ok := strings.CutPrefix(base, "fca_cia_aberta_")
		if !ok || !strings.HasSuffix(base, ".csv") {
			opt.add(func(s *Stats) { s.Unused++ })
			continue
		}
		member := p + ":" + zf.Name
		var read func(io.Reader) error
		switch {
		case strings.HasPrefix(rest, "valor_mobiliario"):
			read = func(r io.Reader) (err error) {
				ls, err := ReadValorMobiliario(r, member, opt)
				out.Listings = append(out.Listings, ls...)
				return err
			}
		case strings.HasPrefix(rest, "endereco"):
			read = func(r io.Reader) (err error) {
				as, err := ReadEndereco(r, member, opt)
				out.Addresses = append(out.Addresses, as...)
				return err
			}
		case strings.HasPrefix(rest, "geral"):
			read = func(r io.Reader) (err error) {
				gs, err := ReadFCAGeral(r, member, opt)
				out.General = append(out.General, gs...)
				return err
			}
		case isYear(strings.TrimSuffix(rest, ".csv")):
			read = func(r io.Reader) (err error) {
				ix, err := ReadDocIndex(r, member, opt)
				out.Index = append(out.Index, ix...)
				return err
			}
		default:
			opt.add(func(s *Stats) { s.Unused++ })
			continue
		}
		rc, err := zf.Open()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", member, err)
		}
		err = read(rc)
		rc.Close()
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}
