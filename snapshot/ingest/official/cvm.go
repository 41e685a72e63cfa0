package official

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/sectors"
)

// cadHeader is cad_cia_aberta.csv's header, as CVM publishes it.
const cadHeader = "CNPJ_CIA;DENOM_SOCIAL;DENOM_COMERC;DT_REG;DT_CONST;DT_CANCEL;MOTIVO_CANCEL;SIT;DT_INI_SIT;CD_CVM;SETOR_ATIV;TP_MERC;CATEG_REG;DT_INI_CATEG;SIT_EMISSOR;DT_INI_SIT_EMISSOR;CONTROLE_ACIONARIO;TP_ENDER;LOGRADOURO;COMPL;BAIRRO;MUN;UF;PAIS;CEP;DDD_TEL;TEL;DDD_FAX;FAX;EMAIL;TP_RESP;RESP;DT_INI_RESP;LOGRADOURO_RESP;COMPL_RESP;BAIRRO_RESP;MUN_RESP;UF_RESP;PAIS_RESP;CEP_RESP;DDD_TEL_RESP;TEL_RESP;DDD_FAX_RESP;FAX_RESP;EMAIL_RESP;CNPJ_AUDITOR;AUDITOR"

// cvmCompanies are the companies the CVM registry lists: kind COMPANY
// (funds report elsewhere; foreign BDR issuers are in cad_cia_estrang).
func (w *writer) cvmCompanies() []*engine.Company {
	var out []*engine.Company
	for i := range w.u.Companies {
		if c := &w.u.Companies[i]; c.Kind == engine.KindCompany && len(c.ID) == 14 {
			out = append(out, c)
		}
	}
	return out
}

func situation(status string) string {
	switch status {
	case "CANCELLED":
		return "CANCELADA"
	case "SUSPENDED":
		return "SUSPENSO(A) - DECISÃO ADM"
	}
	return "ATIVO"
}

func (w *writer) cvmJobs() []func() error {
	jobs := []func() error{w.writeCad, w.writeFCA}
	years := map[string][]int{} // form -> years
	seen := map[string]bool{}
	for i := range w.u.Reports {
		r := &w.u.Reports[i]
		if len(r.CompanyID) != 14 {
			continue
		}
		k := fmt.Sprintf("%s%d", r.Form, r.ReferenceDate.Time().Year())
		if !seen[k] {
			seen[k] = true
			years[r.Form.String()] = append(years[r.Form.String()], r.ReferenceDate.Time().Year())
		}
	}
	for _, form := range []string{"DFP", "ITR"} {
		ys := years[form]
		sort.Ints(ys)
		for _, y := range ys {
			jobs = append(jobs, func() error { return w.writeFilings(form, y) })
		}
	}
	return jobs
}

// writeCad writes cad_cia_aberta.csv: one row per company.
func (w *writer) writeCad() error {
	return w.writeFile(CadPath, func(out io.Writer) error {
		r := &csvRow{w: out}
		if err := r.write(strings.Split(cadHeader, ";")...); err != nil {
			return err
		}
		for _, c := range w.cvmCompanies() {
			cancel := ""
			if c.Status == "CANCELLED" {
				cancel = isoDate(c.StatusDate)
			}
			sector := firstMapped(sectors.CVM, c.SubIndustryID)
			reg := c.IPODate
			if !reg.Valid() || c.FoundingDate.Valid() && reg < c.FoundingDate {
				reg = c.FoundingDate
			}
			a := c.Address
			f := make([]string, 47)
			f[0], f[1], f[2], f[3], f[4] = cnpjText(c.ID), c.Name, c.TradingName, isoDate(reg), isoDate(c.FoundingDate)
			f[5], f[7], f[8], f[9], f[10] = cancel, situation(c.Status), isoDate(c.StatusDate), c.CVMCode, sector
			f[11], f[12], f[14], f[16], f[17] = "BOLSA", "Categoria A", "FASE OPERACIONAL", "PRIVADO", "SEDE"
			f[18], f[19], f[21], f[22], f[23], f[24] = a.Line1, a.Line2, a.City, a.State, a.Country, strings.ReplaceAll(a.PostalCode, "-", "")
			if err := r.write(f...); err != nil {
				return err
			}
		}
		return nil
	})
}

// fcaClass is the FCA Valor_Mobiliario and preferred-class code of a
// share class.
func fcaClass(st string) (kind, pref string) {
	switch st {
	case engine.ClassCS:
		return "Ações Ordinárias", ""
	case engine.ClassPS:
		return "Ações Preferenciais", ""
	case engine.ClassPSA, engine.ClassPSB, engine.ClassPSC, engine.ClassPSD, engine.ClassPSE:
		return "Ações Preferenciais", "PN" + st[2:]
	case engine.ClassUnit:
		return "Units", ""
	}
	return "", ""
}

// writeFCA writes the FCA archive of the as-of year: valor_mobiliario
// (every listed share and unit of each company, ticker to CNPJ), geral
// (founding date, activity, website) and endereco (head office), and its
// filing index.
func (w *writer) writeFCA() error {
	y := w.asOf.Time().Year()
	ref := isoDate(engine.MakeDate(y, 1, 1))
	cos := w.cvmCompanies()
	docID := func(i int) string { return fmt.Sprint(900000 + i) }
	tbl := func(name, header string, rows func(r *csvRow) error) member {
		return member{fmt.Sprintf("fca_cia_aberta_%s%d.csv", name, y), func(out io.Writer) error {
			r := &csvRow{w: out}
			if err := r.write(strings.Split(header, ";")...); err != nil {
				return err
			}
			return rows(r)
		}}
	}
	ms := []member{
		tbl("", "CNPJ_CIA;DT_REFER;VERSAO;DENOM_CIA;CD_CVM;CATEG_DOC;ID_DOC;DT_RECEB;LINK_DOC", func(r *csvRow) error {
			for i, c := range cos {
				if err := r.write(cnpjText(c.ID), ref, "1", c.Name, c.CVMCode, "FCA", docID(i), ref,
					"https://www.rad.cvm.gov.br/ENET/frmExibirArquivoFCAView.aspx?NumeroSequencialDocumento="+docID(i)); err != nil {
					return err
				}
			}
			return nil
		}),
		tbl("valor_mobiliario_", "CNPJ_Companhia;Data_Referencia;Versao;ID_Documento;Nome_Empresarial;Valor_Mobiliario;Sigla_Classe_Acao_Preferencial;Classe_Acao_Preferencial;Codigo_Negociacao;Composicao_BDR_Unit;Mercado;Sigla_Entidade_Administradora;Entidade_Administradora;Data_Inicio_Negociacao;Data_Fim_Negociacao;Segmento;Data_Inicio_Listagem;Data_Fim_Listagem", func(r *csvRow) error {
			for i, c := range cos {
				for _, s := range w.secs[c.ID] {
					kind, pref := fcaClass(s.StockType)
					if kind == "" {
						continue
					}
					comp := ""
					if s.StockType == engine.ClassUnit && s.UnitFactor.Valid() {
						comp = fmt.Sprintf("%s ações", decimal(s.UnitFactor))
					}
					if err := r.write(cnpjText(c.ID), ref, "1", docID(i), c.Name, kind, pref, pref, s.Ticker, comp,
						"Bolsa", "B3", "B3 S.A. - Brasil, Bolsa, Balcão", isoDate(s.ListedFrom), isoDate(s.ListedTo),
						c.ListingSegment, isoDate(c.IPODate), ""); err != nil {
						return err
					}
				}
			}
			return nil
		}),
		tbl("geral_", "CNPJ_Companhia;Data_Referencia;Versao;ID_Documento;Nome_Empresarial;Data_Nome_Empresarial;Nome_Empresarial_Anterior;Data_Constituicao;Codigo_CVM;Data_Registro_CVM;Categoria_Registro_CVM;Data_Categoria_Registro_CVM;Situacao_Registro_CVM;Data_Situacao_Registro_CVM;Pais_Origem;Pais_Custodia_Valores_Mobiliarios;Setor_Atividade;Descricao_Atividade;Situacao_Emissor;Data_Situacao_Emissor;Especie_Controle_Acionario;Data_Especie_Controle_Acionario;Dia_Encerramento_Exercicio_Social;Mes_Encerramento_Exercicio_Social;Data_Alteracao_Exercicio_Social;Pagina_Web", func(r *csvRow) error {
			for i, c := range cos {
				sector := firstMapped(sectors.CVM, c.SubIndustryID)
				f := make([]string, 26)
				f[0], f[1], f[2], f[3], f[4] = cnpjText(c.ID), ref, "1", docID(i), c.Name
				f[7], f[8], f[10], f[12], f[13] = isoDate(c.FoundingDate), c.CVMCode, "Categoria A", situation(c.Status), isoDate(c.StatusDate)
				f[14], f[16], f[17], f[18] = "Brasil", sector, c.Description, "Fase Operacional"
				f[20], f[22], f[23], f[25] = "Privado", "31", "12", c.Website
				if err := r.write(f...); err != nil {
					return err
				}
			}
			return nil
		}),
		tbl("endereco_", "CNPJ_Companhia;Data_Referencia;Versao;ID_Documento;Nome_Empresarial;Tipo_Endereco;Logradouro;Complemento;Bairro;Cidade;Sigla_UF;Pais;CEP;Caixa_Postal;DDI_Telefone;DDD_Telefone;Telefone;DDI_Fax;DDD_Fax;Fax;Email", func(r *csvRow) error {
			for i, c := range cos {
				a := c.Address
				f := make([]string, 21)
				f[0], f[1], f[2], f[3], f[4], f[5] = cnpjText(c.ID), ref, "1", docID(i), c.Name, "Sede"
				f[6], f[7], f[9], f[10], f[11], f[12] = a.Line1, a.Line2, a.City, a.State, a.Country, strings.ReplaceAll(a.PostalCode, "-", "")
				if err := r.write(f...); err != nil {
					return err
				}
			}
			return nil
		}),
	}
	return w.writeZip(fmt.Sprintf("%s/fca_cia_aberta_%d.zip", FCADir, y), ms)
}

// statementGroup names the GRUPO_DFP of a statement.
var statementGroup = map[string]string{
	"BPA": "Balanço Patrimonial Ativo", "BPP": "Balanço Patrimonial Passivo", "DRE": "Demonstração do Resultado",
	"DRA": "Demonstração de Resultado Abrangente", "DVA": "Demonstração de Valor Adicionado",
	"DFC_MI": "Demonstração do Fluxo de Caixa - Método Indireto", "DFC_MD": "Demonstração do Fluxo de Caixa - Método Direto",
}

// inThousands reports whether every value of r but the per-share lines
// is a whole number of thousands (ESCALA_MOEDA MIL then carries it
// exactly).
func inThousands(r *engine.Report) bool {
	acc := r.AccountList()
	for i := range acc.Len() {
		a := acc.At(i)
		if perShare(r.Statement.String(), a.Code()) || !a.Value.Valid() {
			continue
		}
		v := float64(a.Value) / 1000
		if v != math.Trunc(v) || math.Abs(v) > 1<<52 {
			return false
		}
	}
	return true
}

func perShare(stmt, code string) bool {
	return stmt == "DRE" && (code == "3.99" || strings.HasPrefix(code, "3.99."))
}

// writeFilings writes the yearly archive of form (DFP or ITR) for
// reference year y as the CVM publishes it: each download holds the
// latest version of each filing of its day, so a year with restated
// filings is written as the downloads pregao fetch keeps
// (publications): the newest under the official name, each earlier one
// that holds a version restated since beside it (fetch.KeptName).
func (w *writer) writeFilings(form string, y int) error {
	var reps []*engine.Report
	for i := range w.u.Reports {
		r := &w.u.Reports[i]
		if r.Form.String() == form && len(r.CompanyID) == 14 && r.ReferenceDate.Time().Year() == y {
			reps = append(reps, r)
		}
	}
	// The filings: one per (company, reference date, version).
	seen := map[string]bool{}
	var fs []*engine.Report
	for _, r := range reps {
		k := fmt.Sprint(r.CompanyID, r.ReferenceDate, r.Version)
		if !seen[k] {
			seen[k] = true
			fs = append(fs, r)
		}
	}
	sort.Slice(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if a.CompanyID != b.CompanyID {
			return a.CompanyID < b.CompanyID
		}
		if a.ReferenceDate != b.ReferenceDate {
			return a.ReferenceDate < b.ReferenceDate
		}
		return a.Version < b.Version
	})
	vs := make([]filingVersion, len(fs))
	docID := make(map[*engine.Report]int, len(fs)) // ID_DOC, one per filing whatever the download
	for i, r := range fs {
		docID[r] = 100000 + i
		vs[i] = filingVersion{key: fmt.Sprint(r.CompanyID, r.ReferenceDate), version: r.Version, day: localDate(r.PublishDate.Time())}
	}
	w.add(func(s *Stats) { s.Reports += len(reps) })
	rel := fmt.Sprintf("%s/%s_cia_aberta_%d.zip", map[string]string{"DFP": DFPDir, "ITR": ITRDir}[form], strings.ToLower(form), y)
	for _, p := range publications(vs) {
		held := map[string]bool{}
		var pfs []*engine.Report
		for i, r := range fs {
			if p.hold[i] {
				held[fmt.Sprint(r.CompanyID, r.ReferenceDate, r.Version)] = true
				pfs = append(pfs, r)
			}
		}
		var preps []*engine.Report
		for _, r := range reps {
			if held[fmt.Sprint(r.CompanyID, r.ReferenceDate, r.Version)] {
				preps = append(preps, r)
			}
		}
		if err := w.writeFilingZip(publicationPath(rel, p), form, y, preps, pfs, docID); err != nil {
			return err
		}
	}
	return nil
}

// writeFilingZip writes one download of the yearly archive of form for
// reference year y, at rel: reps, one table per statement and
// aggregation (con, ind); the capital table and the filing index of fs,
// the filings of reps (sorted by company, reference date and version;
// docID gives each its ID_DOC).
// Every report is written as filed (ÚLTIMO), followed by its figures
// again as the next period's comparatives (PENÚLTIMO, one year earlier),
// which import skips.
func (w *writer) writeFilingZip(rel, form string, y int, reps, fs []*engine.Report, docID map[*engine.Report]int) error {
	lower := strings.ToLower(form)
	var ms []member
	for _, stmt := range engine.Statements {
		for _, agg := range []string{engine.AggConsolidated, engine.AggIndividual} {
			var sel []*engine.Report
			for _, r := range reps {
				if r.Statement.String() == stmt && r.Aggregation.String() == agg {
					sel = append(sel, r)
				}
			}
			if len(sel) == 0 {
				continue
			}
			suffix, grupo := "con", "DF Consolidado - "
			if agg == engine.AggIndividual {
				suffix, grupo = "ind", "DF Individual - "
			}
			grupo += statementGroup[stmt]
			balance := stmt == "BPA" || stmt == "BPP"
			header := "CNPJ_CIA;DT_REFER;VERSAO;DENOM_CIA;CD_CVM;GRUPO_DFP;MOEDA;ESCALA_MOEDA;ORDEM_EXERC;DT_INI_EXERC;DT_FIM_EXERC;CD_CONTA;DS_CONTA;VL_CONTA;ST_CONTA_FIXA"
			if balance {
				header = strings.Replace(header, "DT_INI_EXERC;", "", 1)
			}
			ms = append(ms, member{fmt.Sprintf("%s_cia_aberta_%s_%s_%d.csv", lower, stmt, suffix, y), func(out io.Writer) error {
				r := &csvRow{w: out}
				if err := r.write(strings.Split(header, ";")...); err != nil {
					return err
				}
				var n int64
				for _, rep := range sel {
					c := w.company[rep.CompanyID]
					scale, div := "UNIDADE", 1.0
					if inThousands(rep) {
						scale, div = "MIL", 1000
					}
					for _, ord := range []string{"ÚLTIMO", "PENÚLTIMO"} {
						ini, fim := rep.StartDate, rep.EndDate
						if ord == "PENÚLTIMO" {
							ini, fim = yearBefore(ini), yearBefore(fim)
						}
						acc := rep.AccountList()
						for j := range acc.Len() {
							a := acc.At(j)
							v := a.Value
							if !perShare(stmt, a.Code()) && v.Valid() {
								v /= engine.Num(div)
							}
							fixed := "N"
							if a.Fixed() {
								fixed = "S"
							}
							f := []string{cnpjText(rep.CompanyID), isoDate(rep.ReferenceDate), fmt.Sprint(rep.Version), c.Name, c.CVMCode,
								grupo, "REAL", scale, ord, isoDate(ini), isoDate(fim), a.Code(), a.Name(), decimal(v), fixed}
							if balance {
								f = append(f[:9], f[10:]...)
							}
							if err := r.write(f...); err != nil {
								return err
							}
							n++
						}
					}
				}
				w.add(func(s *Stats) { s.StatementRows += n })
				return nil
			}})
		}
	}
	// Filing index and capital: one row per (company, reference date, version).
	ms = append(ms, member{fmt.Sprintf("%s_cia_aberta_%d.csv", lower, y), func(out io.Writer) error {
		r := &csvRow{w: out}
		if err := r.write("CNPJ_CIA", "DT_REFER", "VERSAO", "DENOM_CIA", "CD_CVM", "CATEG_DOC", "ID_DOC", "DT_RECEB", "LINK_DOC"); err != nil {
			return err
		}
		for _, rep := range fs {
			c := w.company[rep.CompanyID]
			link := ""
			if len(rep.Sources.All()) > 0 {
				link = rep.Sources.All()[0].VisualizationURL.String()
			}
			if err := r.write(cnpjText(rep.CompanyID), isoDate(rep.ReferenceDate), fmt.Sprint(rep.Version), c.Name, c.CVMCode,
				form, fmt.Sprint(docID[rep]), isoDate(localDate(rep.PublishDate.Time())), link); err != nil {
				return err
			}
		}
		return nil
	}})
	ms = append(ms, member{fmt.Sprintf("%s_cia_aberta_composicao_capital_%d.csv", lower, y), func(out io.Writer) error {
		r := &csvRow{w: out}
		if err := r.write("CNPJ_CIA", "DT_REFER", "VERSAO", "DENOM_CIA", "QT_ACAO_ORDIN_CAP_INTEGR", "QT_ACAO_PREF_CAP_INTEGR",
			"QT_ACAO_TOTAL_CAP_INTEGR", "QT_ACAO_ORDIN_TESOURO", "QT_ACAO_PREF_TESOURO", "QT_ACAO_TOTAL_TESOURO"); err != nil {
			return err
		}
		for _, rep := range fs {
			p, ok := w.sharesAt(rep.CompanyID, rep.ReferenceDate)
			if !ok {
				continue
			}
			c := w.company[rep.CompanyID]
			if err := r.write(cnpjText(rep.CompanyID), isoDate(rep.ReferenceDate), fmt.Sprint(rep.Version), c.Name,
				fmt.Sprint(p.Common), fmt.Sprint(p.Preferred), fmt.Sprint(p.Common+p.Preferred), "", "", fmt.Sprint(p.Treasury)); err != nil {
				return err
			}
		}
		return nil
	}})
	return w.writeZip(rel, ms)
}

// yearBefore is d one year earlier (Feb 29 becomes Feb 28).
func yearBefore(d engine.Date) engine.Date {
	if !d.Valid() {
		return d
	}
	y, m, day := d.Time().Date()
	return engine.MakeDate(y-1, m, min(day, engine.DaysIn(y-1, int(m))))
}

// sharesAt is the company's share count in force on day d: its latest
// point dated on or before d.
func (w *writer) sharesAt(id string, d engine.Date) (engine.SharesPoint, bool) {
	ps := w.shares[id]
	i := sort.Search(len(ps), func(i int) bool { return ps[i].Date > d })
	if i == 0 {
		return engine.SharesPoint{}, false
	}
	return ps[i-1], true
}
