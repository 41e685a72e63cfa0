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
	rd := opt.NewReader(r, name)
	if err := rd.ReadHeader(); err != nil {
		return nil, err
	}
	opt.add(func(s *Stats) { s.Files++ })
	var c [5]int
	for i, n := range []string{"CNPJ_Companhia", "Data_Referencia", "Versao", "Tipo_Endereco", "Logradouro"} {
		var err error
		if c[i], err = rd.Require(n); err != nil {
			return nil, err
		}
	}
	cCompl, cBairro, cCid, cUF, cPais, cCEP, cMail := rd.Col("Complemento"), rd.Col("Bairro"), rd.Col("Cidade"),
		rd.Col("Sigla_UF"), rd.Col("Pais"), rd.Col("CEP"), rd.Col("Email")
	var out []AddressRow
	for {
		err := rd.Next()
		if err == io.EOF {
			break
		}
		opt.countRow()
		if err == nil {
			var a AddressRow
			if a.CompanyID, err = cnpj(rd.Field(c[0])); err != nil {
				err = rd.Errorf(c[0], "%v", err)
			} else if a.ReferenceDate, err = reqDate(rd, c[1]); err == nil {
				v, perr := ParseInt(rd.Field(c[2]))
				if perr != nil || v < 1 || v > 1<<20 {
					err = rd.Errorf(c[2], "bad version %q", rd.Field(c[2]))
				} else {
					a.Version = int(v)
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
					continue
				}
			}
		}
		if err = opt.rowErr(err); err != nil {
			return nil, err
		}
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
