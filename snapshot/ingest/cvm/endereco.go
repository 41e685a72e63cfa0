package cvm

import (
	"io"
	"strings"

	"github.com/pregao/pregao/engine"
)

// AddressRow is one row of the FCA endereco table
// (fca_cia_aberta_endereco_YYYY.csv).
type AddressRow struct {
	CompanyID     string      // CNPJ digits (CNPJ_Companhia)
	ReferenceDate engine.Date // Data_Referencia
	Version       int         // Versao
	Type          string      // Tipo_Endereco as written (Sede, Correspondência...)
	Address       engine.Address
	Email         string
}

// ReadEndereco reads an FCA endereco table, rows in file order. Line1 is
// Logradouro, Line2 Complemento and Bairro joined by " - ", PostalCode the
// CEP as 00000-000. Required columns: CNPJ_Companhia, Data_Referencia,
// Versao, Tipo_Endereco, Logradouro.
func ReadEndereco(r io.Reader, name string, opt Options) ([]AddressRow, error) {
	rd, err := opt.Open(r, name)
	if err != nil {
		return nil, err
	}
	c, err := rd.requireAll("CNPJ_Companhia", "Data_Referencia", "Versao", "Tipo_Endereco", "Logradouro")
	if err != nil {
		return nil, err
	}
	cCompl, cBairro, cCid, cUF, cPais, cCEP, cMail := rd.Col("Complemento"), rd.Col("Bairro"), rd.Col("Cidade"),
		rd.Col("Sigla_UF"), rd.Col("Pais"), rd.Col("CEP"), rd.Col("Email")
	var out []AddressRow
	err = opt.EachRow(rd, func() error {
		var a AddressRow
		var err error
		if a.CompanyID, err = cnpj(rd.Field(c[0])); err != nil {
			return rd.Errorf(c[0], "%v", err)
		}
		if a.ReferenceDate, err = reqDate(rd, c[1]); err != nil {
			return err
		}
		if a.Version, err = version(rd, c[2]); err != nil {
			return err
		}
		a.Type = rd.String(c[3])
		a.Address = engine.Address{
			Line1:      rd.String(c[4]),
			Line2:      joinNonEmpty(" - ", rd.String(cCompl), rd.String(cBairro)),
			City:       rd.String(cCid),
			State:      rd.String(cUF),
			PostalCode: postalCode(rd.Field(cCEP)),
			Country:    rd.String(cPais),
		}
		a.Email = rd.String(cMail)
		out = append(out, a)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ApplyAddresses sets each company's Address from its head-office row
// (Tipo_Endereco starting with "Sede") of the latest FCA (highest
// Data_Referencia, then Versao). A company that already has an address
// keeps it unless overwrite is true. It modifies companies in place.
func ApplyAddresses(companies []engine.Company, rows []AddressRow, overwrite bool) {
	best := map[string]*AddressRow{}
	for i := range rows {
		a := &rows[i]
		if !strings.HasPrefix(strings.ToUpper(foldString(a.Type)), "SEDE") {
			continue
		}
		b, ok := best[a.CompanyID]
		if !ok || a.ReferenceDate > b.ReferenceDate || (a.ReferenceDate == b.ReferenceDate && a.Version > b.Version) {
			best[a.CompanyID] = a
		}
	}
	for i := range companies {
		c := &companies[i]
		a, ok := best[c.ID]
		if !ok || (!overwrite && c.Address != (engine.Address{})) {
			continue
		}
		c.Address = a.Address
	}
}
