package official

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/sectors"
)

// fiiJobs returns one job per year of fund reports: the yearly
// inf_mensal_fii_YYYY.zip archive (geral, complemento, ativo_passivo).
func (w *writer) fiiJobs() []func() error {
	by := map[int][]*engine.FundReport{}
	for i := range w.u.FundReports {
		r := &w.u.FundReports[i]
		if c := w.company[r.FundID]; c == nil || c.Kind != engine.KindFII {
			continue
		}
		y := r.ReferenceDate.Time().Year()
		by[y] = append(by[y], r)
	}
	var ys []int
	for y := range by {
		ys = append(ys, y)
	}
	sort.Ints(ys)
	var jobs []func() error
	for _, y := range ys {
		jobs = append(jobs, func() error { return w.writeFII(y, by[y]) })
	}
	return jobs
}

// fundISIN is the ISIN of the fund's quota (its first fund-unit ticker).
func (w *writer) fundISIN(id string) string {
	for _, s := range w.secs[id] {
		if s.StockType == engine.ClassFundUnit && s.ISIN != "" {
			return s.ISIN
		}
	}
	return ""
}

const (
	fiiGeralHeader       = "CNPJ_Fundo;Data_Referencia;Versao;Data_Entrega;Nome_Fundo;Data_Funcionamento;Publico_Alvo;Codigo_ISIN;Quantidade_Cotas_Emitidas;Fundo_Exclusivo;Cotistas_Vinculo_Familiar;Mandato;Segmento_Atuacao;Tipo_Gestao;Prazo_Duracao;Data_Prazo_Duracao;Encerramento_Exercicio_Social;Mercado_Negociacao_Bolsa;Mercado_Negociacao_MBO;Mercado_Negociacao_MB;Entidade_Administradora_BVMF;Entidade_Administradora_CETIP;Nome_Administrador;CNPJ_Administrador;Logradouro;Numero;Complemento;Bairro;Cidade;Estado;CEP;Telefone1;Telefone2;Telefone3;Site;Email"
	fiiComplementoHeader = "CNPJ_Fundo;Data_Referencia;Versao;Data_Informacao_Numero_Cotistas;Total_Numero_Cotistas;Numero_Cotistas_Pessoa_Fisica;Numero_Cotistas_Pessoa_Juridica_Nao_Financeira;Numero_Cotistas_Banco_Comercial;Numero_Cotistas_Corretora_Distribuidora;Numero_Cotistas_Outras_Pessoas_Juridicas_Financeira;Numero_Cotistas_Investidores_Nao_Residentes;Numero_Cotistas_Entidade_Aberta_Previdencia_Complementar;Numero_Cotistas_Entidade_Fechada_Previdência_Complementar;Numero_Cotistas_Regime_Proprio_Previdencia_Servidores_Publicos;Numero_Cotistas_Sociedade_Seguradora_Resseguradora;Numero_Cotistas_Sociedade_Capitalizacao_Arrendamento_Mercantil;Numero_Cotistas_FII;Numero_Cotistas_Outros_Fundos;Numero_Cotistas_Distribuidores_Fundo;Numero_Cotistas_Outros_Tipos;Valor_Ativo;Patrimonio_Liquido;Cotas_Emitidas;Valor_Patrimonial_Cotas;Percentual_Despesas_Taxa_Administracao;Percentual_Despesas_Agente_Custodiante;Percentual_Rentabilidade_Efetiva_Mes;Percentual_Rentabilidade_Patrimonial_Mes;Percentual_Dividend_Yield_Mes;Percentual_Amortizacao_Cotas_Mes"
	fiiAtivoHeader       = "CNPJ_Fundo;Data_Referencia;Versao;Total_Necessidades_Liquidez;Disponibilidades"
)

// writeFII writes the monthly reports of year y (rs, every version) as
// the CVM publishes them: each download holds the latest version of each
// fund's month of its day, so a year with restated reports is written as
// the downloads pregao fetch keeps (publications): the newest under the
// official name, each earlier one that holds a version restated since
// beside it (fetch.KeptName).
func (w *writer) writeFII(y int, rs []*engine.FundReport) error {
	vs := make([]filingVersion, len(rs))
	for i, fr := range rs {
		vs[i] = filingVersion{key: fmt.Sprint(fr.FundID, fr.ReferenceDate), version: fr.Version, day: localDate(fr.PublishDate)}
	}
	w.add(func(s *Stats) { s.FundReports += len(rs) })
	rel := fmt.Sprintf("%s/inf_mensal_fii_%d.zip", FIIDir, y)
	for _, p := range publications(vs) {
		var held []*engine.FundReport
		for i, fr := range rs {
			if p.hold[i] {
				held = append(held, fr)
			}
		}
		if err := w.writeFIIZip(publicationPath(rel, p), y, held); err != nil {
			return err
		}
	}
	return nil
}

// writeFIIZip writes one download of the monthly reports of year y, at
// rel: the tables of rs.
func (w *writer) writeFIIZip(rel string, y int, rs []*engine.FundReport) error {
	tbl := func(name, header string, row func(r *csvRow, fr *engine.FundReport) error) member {
		return member{fmt.Sprintf("inf_mensal_fii_%s_%d.csv", name, y), func(out io.Writer) error {
			r := &csvRow{w: out}
			if err := r.write(strings.Split(header, ";")...); err != nil {
				return err
			}
			for _, fr := range rs {
				if err := row(r, fr); err != nil {
					return err
				}
			}
			return nil
		}}
	}
	key := func(fr *engine.FundReport) []string {
		return []string{cnpjText(fr.FundID), isoDate(fr.ReferenceDate), fmt.Sprint(fr.Version)}
	}
	ms := []member{
		tbl("geral", fiiGeralHeader, func(r *csvRow, fr *engine.FundReport) error {
			c := w.company[fr.FundID]
			a := c.Address
			f := make([]string, 36)
			copy(f, key(fr))
			f[3], f[4], f[5], f[6], f[7] = isoDate(localDate(fr.PublishDate)), c.Name, isoDate(c.FoundingDate), "INVESTIDORES EM GERAL", w.fundISIN(c.ID)
			f[8], f[9], f[10], f[11], f[12], f[13] = decimal(fr.SharesOut), "N", "N", "Renda", firstMapped(sectors.FII, c.SubIndustryID), "Ativa"
			f[14], f[16], f[17], f[18], f[19] = "Indeterminado", "31/12", "S", "N", "N"
			f[24], f[26], f[28], f[29], f[30] = a.Line1, a.Line2, a.City, a.State, a.PostalCode
			f[34] = c.Website
			return r.write(f...)
		}),
		tbl("complemento", fiiComplementoHeader, func(r *csvRow, fr *engine.FundReport) error {
			f := make([]string, 30)
			copy(f, key(fr))
			f[4], f[20], f[21], f[22], f[23] = decimal(fr.Investors), decimal(fr.TotalAssets), decimal(fr.NetAssets), decimal(fr.SharesOut), decimal(fr.NAVPerShare)
			f[26], f[28] = decimal(fr.MonthlyReturn), decimal(fr.DividendYield)
			return r.write(f...)
		}),
		tbl("ativo_passivo", fiiAtivoHeader, func(r *csvRow, fr *engine.FundReport) error {
			return r.write(append(key(fr), "0", "0")...)
		}),
	}
	return w.writeZip(rel, ms)
}
