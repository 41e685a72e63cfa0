package demo

import (
	"fmt"
	"strings"

	"github.com/pregao/pregao/engine"
)

// taxonomy is the four-level sector tree, one node per line, indented by
// one space per level. Sub-industry lines end with "#tag", which drives the
// reporting model, index membership and naming of the companies in it.
const taxonomy = `Petróleo, Gás e Biocombustíveis
 Petróleo e Gás
  Exploração e Produção
   Exploração e Produção Integrada #oil
   Exploração e Produção Independente #oil
  Refino e Distribuição
   Refino #oil
   Distribuição de Combustíveis #oil
 Equipamentos e Serviços de Petróleo
  Serviços de Perfuração e Apoio
   Perfuração Offshore #oil
   Apoio Marítimo #oil
 Biocombustíveis
  Etanol e Biodiesel
   Etanol #agro
   Biodiesel #agro
Materiais Básicos
 Mineração e Siderurgia
  Mineração
   Minerais Metálicos #mat
   Minerais não Metálicos #mat
  Siderurgia e Metalurgia
   Siderurgia #mat
   Artefatos de Ferro e Aço #mat
 Químicos e Papel
  Químicos
   Petroquímicos #mat
   Fertilizantes e Defensivos #mat
  Madeira e Papel
   Papel e Celulose #mat
   Madeira #mat
  Embalagens
   Embalagens Plásticas #mat
   Embalagens Metálicas #mat
Bens Industriais
 Bens de Capital
  Máquinas e Equipamentos
   Máquinas Industriais #ind
   Motores e Compressores #ind
   Máquinas Agrícolas #ind
  Material de Transporte
   Material Aeronáutico e de Defesa #ind
   Material Rodoviário #ind
   Material Ferroviário #ind
  Construção e Engenharia
   Engenharia Consultiva #ind
   Construção Pesada #ind
 Transporte
  Transporte Rodoviário e Ferroviário
   Transporte Ferroviário #ind
   Transporte Rodoviário de Cargas #ind
   Locação de Veículos #ind
  Transporte Aéreo e Hidroviário
   Transporte Aéreo #ind
   Transporte Hidroviário #ind
  Infraestrutura de Transporte
   Exploração de Rodovias #ind
   Terminais Portuários #ind
   Aeroportos #ind
 Serviços Comerciais
  Serviços Diversos
   Serviços de Apoio #ind
   Segurança e Facilities #ind
Consumo não Cíclico
 Alimentos e Bebidas
  Alimentos Processados
   Carnes e Derivados #cons
   Laticínios #cons
   Açúcar e Grãos #agro
  Bebidas
   Cervejas e Refrigerantes #cons
   Sucos e Águas #cons
 Agropecuária
  Agricultura
   Produção Agrícola #agro
   Terras Agrícolas #agro
 Comércio e Distribuição de Alimentos
  Varejo Alimentar
   Supermercados #cons
   Atacarejo #cons
 Produtos de Uso Pessoal
  Higiene e Limpeza
   Produtos de Limpeza #cons
   Cosméticos e Perfumaria #cons
Consumo Cíclico
 Construção Civil e Imóveis
  Incorporação
   Incorporações Residenciais #realestate
   Incorporações Econômicas #realestate
  Exploração de Imóveis
   Shopping Centers #realestate
   Propriedades Comerciais #realestate
 Varejo
  Varejo de Bens Duráveis
   Eletrodomésticos #cyc
   Materiais de Construção #cyc
  Varejo de Vestuário
   Tecidos, Vestuário e Calçados #cyc
   Acessórios #cyc
 Automóveis e Autopeças
  Automóveis e Motocicletas
   Autopeças #cyc
   Pneus e Borracha #cyc
 Diversão, Hotéis e Educação
  Hotelaria e Lazer
   Hotéis #cyc
   Viagens e Turismo #cyc
  Serviços Educacionais
   Ensino Superior #cyc
   Educação Básica #cyc
Saúde
 Serviços de Saúde
  Serviços Médico-Hospitalares
   Hospitais #health
   Análises e Diagnósticos #health
   Planos de Saúde #health
 Medicamentos e Equipamentos
  Comércio de Medicamentos
   Farmácias #health
   Distribuição de Medicamentos #health
  Indústria Farmacêutica e Equipamentos
   Medicamentos #health
   Equipamentos Médicos #health
Tecnologia da Informação
 Software e Serviços
  Programas e Serviços
   Software de Gestão #tech
   Serviços de TI #tech
   Plataformas Digitais #tech
 Hardware e Equipamentos
  Computadores e Equipamentos
   Equipamentos de Rede #tech
   Semicondutores #tech
Comunicações
 Telecomunicações
  Telecomunicações
   Telefonia Móvel #comm
   Banda Larga e TV por Assinatura #comm
 Mídia
  Mídia e Entretenimento
   Produção de Conteúdo #comm
   Publicidade #comm
Utilidade Pública
 Energia Elétrica
  Geração de Energia
   Geração Hidrelétrica #elec
   Geração Eólica e Solar #elec
   Geração Térmica #elec
  Transmissão e Distribuição
   Transmissão de Energia #elec
   Distribuição de Energia #elec
 Água e Saneamento
  Saneamento
   Água e Esgoto #water
   Gestão de Resíduos #water
 Gás
  Distribuição de Gás
   Gás Canalizado #gas
   Gás Liquefeito #gas
Financeiro
 Bancos e Serviços Financeiros
  Intermediários Financeiros
   Bancos Múltiplos #bank
   Bancos de Investimento #bank
   Bancos Digitais #bank
  Serviços Financeiros Diversos
   Meios de Pagamento #fin
   Gestão de Recursos #fin
   Crédito ao Consumidor #fin
   Bolsas e Infraestrutura de Mercado #fin
 Seguros e Previdência
  Seguradoras
   Seguros Gerais #ins
   Resseguros #ins
   Previdência e Capitalização #ins
 Holdings e Participações
  Holdings Diversificadas
   Holdings de Participações #fin
   Securitizadoras #fin
 Fundos Imobiliários
  Fundos de Tijolo
   Lajes Corporativas #fii
   Galpões Logísticos #fii
   Shoppings e Varejo #fii
   Renda Urbana e Hospitais #fii
   Residencial #fii
   Agências Bancárias #fii
  Fundos de Papel e Híbridos
   Recebíveis Imobiliários #fii
   Fundos de Fundos #fii
   Híbridos #fii
   Desenvolvimento #fii
 Fundos de Índice
  Fundos de Índice
   Ações Brasil #etf
   Ações Internacionais #etf
   Renda Fixa #etf
   Ativos Digitais #etf
   Setoriais e Dividendos #etf`

// sectorNode is a parsed taxonomy node.
type sectorNode struct {
	engine.Sector
	tag string // sub-industries only
}

// parseTaxonomy turns the taxonomy text into sectors in depth-first order
// (parents before children) with GICS-like ids.
func parseTaxonomy() ([]sectorNode, error) {
	var out []sectorNode
	var path [4]string
	var count [5]int
	for n, line := range strings.Split(taxonomy, "\n") {
		lvl := len(line) - len(strings.TrimLeft(line, " ")) + 1
		if lvl < 1 || lvl > 4 {
			return nil, fmt.Errorf("taxonomy line %d: bad indentation", n+1)
		}
		name := strings.TrimSpace(line)
		tag := ""
		if i := strings.Index(name, " #"); i >= 0 {
			tag = name[i+2:]
			name = name[:i]
		}
		if (lvl == 4) != (tag != "") {
			return nil, fmt.Errorf("taxonomy line %d: tag only on sub-industries", n+1)
		}
		count[lvl]++
		for l := lvl + 1; l <= 4; l++ {
			count[l] = 0
		}
		var id, parent string
		if lvl == 1 {
			id = fmt.Sprintf("S%02d", 5+5*count[1])
		} else {
			if path[lvl-2] == "" {
				return nil, fmt.Errorf("taxonomy line %d: no parent", n+1)
			}
			parent = path[lvl-2]
			id = fmt.Sprintf("%s.%02d", parent, 10*count[lvl])
		}
		path[lvl-1] = id
		for l := lvl; l < 4; l++ {
			path[l] = ""
		}
		out = append(out, sectorNode{Sector: engine.Sector{ID: id, Name: name, Level: lvl, ParentID: parent}, tag: tag})
	}
	return out, nil
}
