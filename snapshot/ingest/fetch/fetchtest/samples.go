package fetchtest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/pregao/pregao/snapshot/ingest/datafile"
)

// Sample paths on the official hosts.
const (
	PathD03 = "/InstDados/SerHist/COTAHIST_D03022022.ZIP"
	PathD04 = "/InstDados/SerHist/COTAHIST_D04022022.ZIP"
	PathCad = "/dados/CIA_ABERTA/CAD/DADOS/cad_cia_aberta.csv"
	// PathClosing is the PTAX closing-rates file of 2026-07-31.
	PathClosing = "/Download/fechamento/20260731.csv"
)

// Samples returns a Server holding the project's real sample files and
// answers (testdata/real, and snapshot/ingest/fetch/testdata):
//   - COTAHIST of 2022-02-03 and 2022-02-04 (official ZIPs) and the CVM
//     registry;
//   - GetPortfolioDay of IBOV (87 members, asked in English on
//     2025-04-07: the answer recorded in ropensci/rb3
//     tests/fixtures/GetPortfolioDay.yml)
//     and of SMLL, built in the same shape from the rows of the real SMLL
//     download of 2025-07-02 (114 members);
//   - AMBEV's listed-company answers (ABEV; codeCVM 23264; trading name
//     AMBEVSA: 29 cash events), other companies being unknown (empty
//     supplement, as B3 answers);
//   - the FII (typeFund 7) and ETF (typeFund 20) listing exports;
//   - the SGS series 432 (Selic target, daily: 2020-01-01 to 2026-02-13)
//     and 433 (IPCA, monthly: 2020-01 to 2026-01) as the Banco Central
//     answered them, and its PTAX closing-rates file of 2026-07-31.
func Samples() (*Server, error) {
	real, err := datafile.RealDir()
	if err != nil {
		return nil, err
	}
	root := filepath.Dir(filepath.Dir(real))
	read := func(p string) ([]byte, error) { return datafile.ReadFile(p) }
	rp := func(rel string) string { return filepath.Join(real, filepath.FromSlash(rel)) }
	s := New()
	for _, f := range []struct {
		m   func([]byte)
		src string
	}{
		{func(b []byte) { s.Files[PathD03] = b }, rp("b3-cotahist/gbvbahia01__Spring-Batch-Cotahist/COTAHIST_D03022022.TXT.zip")},
		{func(b []byte) { s.Files[PathD04] = b }, rp("b3-cotahist/gbvbahia01__Spring-Batch-Cotahist/COTAHIST_D04022022.TXT.zip")},
		{func(b []byte) { s.Files[PathCad] = b }, rp("cvm-cad/cad_cia_aberta.csv.zst")},
		{func(b []byte) { s.Portfolios["IBOV"] = b }, filepath.Join(root, "snapshot/ingest/fetch/testdata/GetPortfolioDay_IBOV.json")},
		{func(b []byte) { s.Supplements["ABEV"] = b }, rp("b3-proventos/ropensci__rb3/GetListedSupplementCompany.json.zst")},
		{func(b []byte) { s.Details["23264"] = b }, rp("b3-proventos/ropensci__rb3/GetDetailsCompany.json.zst")},
		{func(b []byte) { s.Cash["AMBEVSA"] = b }, rp("b3-proventos/ropensci__rb3/GetListedCashDividends.json.zst")},
		{func(b []byte) { s.FundLists[7] = b }, rp("b3-listings/FabianoManetti__OtimizacaoPortfolio/fundosListados.csv.zst")},
		{func(b []byte) { s.FundLists[20] = b }, rp("b3-listings/wilsonfreitas__brasa/etfs-listados-20231014.csv.zst")},
		{func(b []byte) { s.SGS[432], s.SGSDaily[432] = b, true }, rp("bcb-sgs/JuanRocha01__ML-ETTJ26/432_01-01-2020_13-02-2026.json.zst")},
		{func(b []byte) { s.SGS[433] = b }, rp("bcb-sgs/JuanRocha01__ML-ETTJ26/433_01-01-2020_13-02-2026.json.zst")},
		{func(b []byte) { s.Files[PathClosing] = b }, rp("bcb-ptax/Wigny__ptax/20260731.csv")},
	} {
		b, err := read(f.src)
		if err != nil {
			return nil, err
		}
		f.m(b)
	}
	smll, err := read(rp("b3-indexes/igor64BR__calculadora-b3-ativos/SMLLDia_02-07-25.csv.zst"))
	if err != nil {
		return nil, err
	}
	if s.Portfolios["SMLL"], err = PortfolioFromCSV(smll, "02/07/25"); err != nil {
		return nil, err
	}
	return s, nil
}

// PortfolioFromCSV builds a GetPortfolioDay answer (Brazilian numbers, as
// asked in Portuguese) from the rows of an index portfolio download
// (Código;Ação;Tipo;Qtde. Teórica;Part. (%)), dated date (dd/mm/yy).
func PortfolioFromCSV(csv []byte, date string) ([]byte, error) {
	type row struct {
		Segment      string `json:"segment"`
		Cod          string `json:"cod"`
		Asset        string `json:"asset"`
		Type         string `json:"type"`
		Part         string `json:"part"`
		PartAcum     string `json:"partAcum"`
		TheoricalQty string `json:"theoricalQty"`
	}
	var rows []row
	sc := bufio.NewScanner(bytes.NewReader(csv))
	for i := 0; sc.Scan(); i++ {
		f := strings.Split(strings.TrimRight(sc.Text(), "\r"), ";")
		if i == 0 || len(f) < 5 || strings.TrimSpace(f[0]) == "" {
			continue
		}
		rows = append(rows, row{Cod: strings.TrimSpace(f[0]), Asset: strings.TrimSpace(f[1]), Type: f[2], TheoricalQty: f[3], Part: f[4]})
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("no portfolio row")
	}
	return json.Marshal(map[string]any{
		"page":    map[string]int{"pageNumber": 1, "pageSize": len(rows), "totalRecords": len(rows), "totalPages": 1},
		"header":  map[string]string{"date": date, "text": "Quantidade Teórica Total", "part": "100,000", "partAcum": "100,000", "textReductor": "Redutor", "reductor": "", "theoricalQty": ""},
		"results": rows,
	})
}
