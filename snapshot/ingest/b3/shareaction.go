package b3

import (
	"fmt"
	"strings"

	"github.com/pregao/pregao/engine"
)

// stockIn is one stockDividends record of a GetListedSupplementCompany
// response, as B3 writes it: the asset concerned (isinCode), the asset
// issued or received (assetIssued), the label, the factor (a Brazilian
// number), the approval and last "with" dates (dd/mm/yyyy) and remarks.
type stockIn struct {
	AssetIssued   string `json:"assetIssued"`
	Factor        string `json:"factor"`
	ApprovedOn    string `json:"approvedOn"`
	ISINCode      string `json:"isinCode"`
	Label         string `json:"label"`
	LastDatePrior string `json:"lastDatePrior"`
	Remarks       string `json:"remarks"`
}

// shareLabels maps stockDividends labels, folded (lower case, no accents,
// single spaces), to share-action types: the abbreviations the
// listed-companies API writes ("CIS RED CAP", "RESG TOTAL RV"...) and
// their spelled-out forms.
var shareLabels = map[string]string{
	"desdobramento":                engine.ActStockSplit,
	"bonificacao":                  engine.ActStockBonus,
	"grupamento":                   engine.ActReverseSplit,
	"cis red cap":                  engine.ActSpinOff,
	"cisao com reducao de capital": engine.ActSpinOff,
	"cis red cap qtd":              engine.ActSpinOffQuantity,
	"cisao com reducao de capital e quantidade": engine.ActSpinOffQuantity,
	"incorporacao":                    engine.ActMerger,
	"resg total rv":                   engine.ActTotalRedemption,
	"resgate total":                   engine.ActTotalRedemption,
	"rest cap acoes":                  engine.ActRestitutionInShares,
	"restituicao de capital em acoes": engine.ActRestitutionInShares,
	"rest cap c/ red":                 engine.ActRestitutionWithReduce,
	"restituicao de capital com reducao de acoes":      engine.ActRestitutionWithReduce,
	"restituicao de capital com reducao de quantidade": engine.ActRestitutionWithReduce,
}

// ShareActionType returns the share-action type of a stockDividends label
// ("CIS RED CAP" is engine.ActSpinOff), or "" when the label is not one
// Pregão maps. Labels that only begin with DESDOBRAMENTO, BONIFICACAO or
// GRUPAMENTO are those types.
func ShareActionType(label string) string {
	l := strings.Join(strings.Fields(fold(label)), " ")
	if t, ok := shareLabels[l]; ok {
		return t
	}
	for _, p := range []string{"desdobramento", "bonificacao", "grupamento"} {
		if strings.HasPrefix(l, p) {
			return shareLabels[p]
		}
	}
	return ""
}

// reducesHolding reports whether an event of type t shrinks the holding of
// the original asset, so that a record on the original asset itself gives
// its leg's factor.
func reducesHolding(t string) bool {
	return t == engine.ActSpinOffQuantity || t == engine.ActRestitutionWithReduce
}

// stockActions turns stockDividends records into share actions, in file
// order, and counts by label (as written) the records whose label maps to
// no type. B3's factor f is read per label:
//
//   - DESDOBRAMENTO (split) and BONIFICACAO (bonus): f% new shares per
//     share held, factor 1+f/100 ("100,000" is 2);
//   - GRUPAMENTO (reverse split): f is the multiplier itself ("0,10" is
//     10:1, factor 0.1); one not below 1 is an error;
//   - RESG TOTAL RV (TOTAL_EQUITY_REDEMPTION): f% of the shares redeemed,
//     root factor 1-f/100, the holding left (0 for "100,0"); no legs;
//   - the leg-bearing labels, CIS RED CAP (SPIN_OFF_CAPITAL_REDUCTION),
//     CIS RED CAP QTD (SPIN_OFF_CAPITAL_REDUCTION_QUANTITY), INCORPORACAO
//     (MERGER_INCORPORATION), REST CAP ACOES
//     (CAPITAL_RESTITUTION_IN_SHARES) and REST CAP C/ RED
//     (CAPITAL_RESTITUTION_WITH_SHARE_REDUCTION): the records of one event
//     (same isinCode, type and last "with" date; the first record's
//     approval date) become one
//     action with a null root factor and legs: the ORIGINAL_ASSET leg
//     (isinCode, factor 1: holders keep their shares, or, for a merger,
//     exchange them) and one RECEIVED_ASSET leg per other assetIssued,
//     factor f/100 (shares of it received per share held, from f's own
//     digits: "50,0" is 0.5). For the two types that reduce the holding,
//     a record whose assetIssued is the original asset (or empty) gives
//     the ORIGINAL_ASSET leg's factor f/100 when below 1 (the shares kept
//     per share held); any other record on the original asset, or without
//     assetIssued, has no leg to set, and its factor goes to remarks.
//
// issued_isin is the first received asset's ISIN (the original's when
// none). Tickers are left empty.
func stockActions(recs []stockIn, name string) ([]engine.ShareAction, map[string]int, error) {
	var out []engine.ShareAction
	var unknown map[string]int
	events := map[string]int{} // event key -> index in out
	for i, x := range recs {
		f := func(n string) string { return fmt.Sprintf("%s: stockDividends[%d].%s", name, i, n) }
		label := strings.TrimSpace(x.Label)
		typ := ShareActionType(label)
		if typ == "" {
			if unknown == nil {
				unknown = map[string]int{}
			}
			unknown[label]++
			continue
		}
		pct, err := ParseNum(x.Factor)
		if err != nil || !pct.Valid() || pct <= 0 {
			return nil, nil, fmt.Errorf("%s: %v", f("factor"), orMissing(err))
		}
		approval, err := ParseDate(x.ApprovedOn)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", f("approvedOn"), err)
		}
		prior, err := ParseDate(x.LastDatePrior)
		if err != nil || !prior.Valid() {
			return nil, nil, fmt.Errorf("%s: %v", f("lastDatePrior"), orMissing(err))
		}
		isin, issued, remarks := strings.TrimSpace(x.ISINCode), strings.TrimSpace(x.AssetIssued), strings.TrimSpace(x.Remarks)
		sa := engine.ShareAction{ISIN: isin, IssuedISIN: issued, ApprovalDate: approval, PriorExDate: prior,
			Type: typ, Label: label, Factor: engine.Null, Remarks: remarks}
		switch typ {
		case engine.ActStockSplit, engine.ActStockBonus:
			sa.Factor = 1 + pct/100
		case engine.ActReverseSplit:
			if pct >= 1 {
				return nil, nil, fmt.Errorf("%s: reverse split factor %s does not reduce the holding (B3 writes the multiplier: 0,10 for 10:1)", f("factor"), x.Factor)
			}
			sa.Factor = pct
		case engine.ActTotalRedemption:
			if pct > 100 {
				return nil, nil, fmt.Errorf("%s: redemption of %s%% of the shares", f("factor"), x.Factor)
			}
			sa.Factor = 1 - percentFraction(pct)
		default:
			key := isin + "\x00" + typ + "\x00" + prior.String()
			k, ok := events[key]
			if !ok {
				sa.IssuedISIN = isin
				sa.Legs = []engine.Leg{{LegType: engine.LegOriginal, ISIN: isin, Factor: 1}}
				sa.Remarks = ""
				out = append(out, sa)
				k = len(out) - 1
				events[key] = k
			}
			a := &out[k]
			if remarks != "" && !strings.Contains(a.Remarks, remarks) {
				a.Remarks = joinRemarks(a.Remarks, remarks)
			}
			r := percentFraction(pct)
			switch {
			case issued != "" && issued != isin:
				dup := false
				for _, l := range a.Legs {
					dup = dup || l.LegType == engine.LegReceived && l.ISIN == issued && l.Factor == r
				}
				if !dup {
					a.Legs = append(a.Legs, engine.Leg{LegType: engine.LegReceived, ISIN: issued, Factor: r})
				}
				if a.IssuedISIN == isin {
					a.IssuedISIN = issued
				}
			case reducesHolding(typ) && r < 1:
				a.Legs[0].Factor = r
			case issued == "":
				a.Remarks = joinRemarks(a.Remarks, "fator "+strings.TrimSpace(x.Factor)+" sem ativo emitido")
			default:
				a.Remarks = joinRemarks(a.Remarks, "fator "+strings.TrimSpace(x.Factor)+" sobre o próprio ativo")
			}
			continue
		}
		out = append(out, sa)
	}
	return out, unknown, nil
}

func joinRemarks(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}
