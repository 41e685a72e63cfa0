package demo

import (
	"fmt"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/sectors"
)

// subTags gives the demo's tag of each sub-industry it places companies
// on: the tag drives the reporting model, index membership and naming of
// the companies. Sub-industries without a tag (OTHER_ACTIVITIES,
// UNCLASSIFIED_COMPANIES) get no demo company, but the demo serves the
// whole taxonomy, as imports of official files do.
var subTags = map[string]string{
	"OIL_GAS_EXPLORATION_REFINING": "oil", "OIL_GAS_EQUIPMENT_SERVICES": "oil",

	"AGRICULTURE": "agro", "SUGAR_ETHANOL": "agro", "GRAINS": "agro", "COFFEE": "agro",

	"METAL_MINING": "mat", "NON_METAL_MINING": "mat", "STEEL": "mat", "IRON_STEEL_PRODUCTS": "mat",
	"COPPER_PRODUCTS": "mat", "PETROCHEMICALS": "mat", "FERTILIZERS_PESTICIDES": "mat",
	"DIVERSIFIED_CHEMICALS": "mat", "WOOD": "mat", "PULP_PAPER": "mat", "CONTAINERS_PACKAGING": "mat",
	"OTHER_MATERIALS": "mat",

	"TRANSPORT_EQUIPMENT_DISTRIBUTION": "ind", "MACHINERY_DISTRIBUTION": "ind", "BUILDING_PRODUCTS": "ind",
	"HEAVY_CONSTRUCTION": "ind", "ENGINEERING_CONSULTING": "ind", "CONSTRUCTION_SERVICES": "ind",
	"ENGINES_COMPRESSORS": "ind", "INDUSTRIAL_MACHINERY": "ind", "CONSTRUCTION_AGRICULTURAL_MACHINERY": "ind",
	"ARMS_AMMUNITION": "ind", "AEROSPACE_DEFENSE": "ind", "ROAD_EQUIPMENT": "ind", "RAILWAY_EQUIPMENT": "ind",
	"DIVERSIFIED_SERVICES": "ind", "AIRLINES": "ind", "RAILROADS": "ind", "WATER_TRANSPORT": "ind",
	"TRUCKING": "ind", "TOLL_ROADS": "ind", "TRANSPORT_SUPPORT_SERVICES": "ind",

	"MEAT_PRODUCTS": "cons", "DAIRY": "cons", "DIVERSIFIED_FOODS": "cons", "BREWERS_SOFT_DRINKS": "cons",
	"CIGARETTES_TOBACCO": "cons", "PERSONAL_PRODUCTS": "cons", "HOUSEHOLD_CLEANING_PRODUCTS": "cons",
	"FOOD_RETAIL": "cons",

	"RESIDENTIAL_CONSTRUCTION": "realestate", "REAL_ESTATE_DEVELOPMENT": "realestate",
	"REAL_ESTATE_OPERATING": "realestate", "REAL_ESTATE_SERVICES": "realestate",

	"AUTOMOBILES_MOTORCYCLES": "cyc", "APPAREL_RETAIL": "cyc", "HOME_APPLIANCES_RETAIL": "cyc",
	"DIVERSIFIED_RETAIL": "cyc", "HOME_IMPROVEMENT_RETAIL": "cyc", "CAR_RENTAL": "cyc",
	"EDUCATION_SERVICES": "cyc", "LOYALTY_PROGRAMS": "cyc", "HOTELS": "cyc", "RESTAURANTS": "cyc",
	"TEXTILES": "cyc", "APPAREL": "cyc", "FOOTWEAR": "cyc", "ACCESSORIES": "cyc", "APPLIANCES": "cyc",
	"FURNITURE": "cyc", "HOUSEWARES": "cyc", "LEISURE_PRODUCTS": "cyc", "TRAVEL_TOURISM": "cyc",
	"SPORTS_ACTIVITIES": "cyc",

	"PHARMACEUTICALS": "health", "HOSPITALS_DIAGNOSTICS": "health", "MEDICAL_EQUIPMENT": "health",
	"PHARMACIES_DRUG_DISTRIBUTION": "health",

	"COMPUTERS_EQUIPMENT": "tech", "SOFTWARE_IT_SERVICES": "tech",

	"TELECOM_SERVICES": "comm", "ADVERTISING": "comm", "FILM_TV_PRODUCTION": "comm", "PUBLISHING": "comm",

	"ELECTRIC_POWER": "elec", "WATER_SANITATION": "water", "GAS_DISTRIBUTION": "gas",

	"TRADITIONAL_BANKS": "bank",
	"CONSUMER_FINANCE":  "fin", "LEASING": "fin", "RECEIVABLES_SECURITIZATION": "fin", "ASSET_MANAGEMENT": "fin",
	"OTHER_FINANCIAL_SERVICES": "fin", "HOLDINGS": "fin",
	"INSURERS": "ins", "INSURANCE_BROKERS": "ins", "REINSURERS": "ins",

	"FII_OFFICES": "fii", "FII_LOGISTICS": "fii", "FII_SHOPPING_CENTERS": "fii", "FII_RESIDENTIAL": "fii",
	"FII_HOSPITALS": "fii", "FII_HOTELS": "fii", "FII_SECURITIES": "fii", "FII_HYBRID": "fii", "FII_OTHER": "fii",

	"ETF_BRAZIL_EQUITY": "etf", "ETF_INTERNATIONAL_EQUITY": "etf", "ETF_FIXED_INCOME": "etf",
	"ETF_DIGITAL_ASSETS": "etf",
}

// fundWords names the demo's funds of a sub-industry where its
// Portuguese name reads badly inside a fund name.
var fundWords = map[string]string{
	"FII_SECURITIES": "Recebíveis", "FII_HOSPITALS": "Hospitais", "FII_HOTELS": "Hotéis", "FII_OTHER": "Renda",
}

// sectorNode is a taxonomy node as the demo uses it.
type sectorNode struct {
	engine.Sector
	pt  string // Portuguese name, for the demo's Portuguese texts
	tag string // sub-industries only; "" for those without demo companies
}

// parseTaxonomy returns the shared taxonomy (package sectors) in
// depth-first order (parents before children) with the demo's tags.
func parseTaxonomy() ([]sectorNode, error) {
	nodes := sectors.Nodes()
	out := make([]sectorNode, len(nodes))
	seen := map[string]bool{}
	for i, n := range nodes {
		out[i] = sectorNode{Sector: n.Sector, pt: n.Portuguese}
		if t, ok := subTags[n.ID]; ok {
			if n.Level != 4 {
				return nil, fmt.Errorf("demo tag on %s, not a sub-industry", n.ID)
			}
			out[i].tag = t
			seen[n.ID] = true
		}
		if w, ok := fundWords[n.ID]; ok {
			out[i].pt = w
		}
	}
	for id := range subTags {
		if !seen[id] {
			return nil, fmt.Errorf("demo tag on %s, not in the taxonomy", id)
		}
	}
	return out, nil
}
