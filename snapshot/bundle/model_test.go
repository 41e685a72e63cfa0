package bundle

import (
	"bytes"
	stdjson "encoding/json"
	"reflect"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/pregao/pregao/engine"
)

// emptyJSON returns a JSON object for type t where every array of objects
// holds one empty object, so that nested defaults are exercised.
func emptyJSON(t reflect.Type) string {
	var b bytes.Buffer
	b.WriteByte('{')
	first := true
	for name, ft := range jsonFields(t) {
		if ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct && ft.Elem() != timeType {
			if !first {
				b.WriteByte(',')
			}
			first = false
			b.WriteString(`"` + name + `":[{}]`)
		}
	}
	b.WriteByte('}')
	return b.String()
}

// checkMissing fails for any Num that is not NaN or Date that is not
// NoDate in v: a field absent from the input must read as missing.
func checkMissing(t *testing.T, v reflect.Value, path string) {
	t.Helper()
	switch v.Type() {
	case typeNum:
		if engine.Num(v.Float()).Valid() {
			t.Errorf("%s: absent Num reads as %v, want null", path, v.Float())
		}
		return
	case typeDate:
		if engine.Date(v.Int()) != engine.NoDate {
			t.Errorf("%s: absent Date reads as %v, want absent", path, v.Int())
		}
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			checkMissing(t, v.Field(i), path+"."+v.Type().Field(i).Name)
		}
	case reflect.Slice:
		for i := range v.Len() {
			checkMissing(t, v.Index(i), path+"[]")
		}
	}
}

// TestAbsentFieldsAreMissing decodes objects with every field absent and
// checks that no Num or Date of any entity, nested ones included, reads
// as 0: a field added to the model without a default fails here.
func TestAbsentFieldsAreMissing(t *testing.T) {
	c := &collector{}
	check := func(name string, in any, def func(), conv func(l *lineCtx) any) {
		t.Run(name, func(t *testing.T) {
			def()
			js := emptyJSON(reflect.TypeOf(in).Elem())
			if _, msg := decodeAny(js, in); msg != "" {
				t.Fatalf("%s: %s", js, msg)
			}
			l := &lineCtx{c: c}
			out := conv(l)
			checkMissing(t, reflect.ValueOf(out), name)
		})
	}
	var co engine.Company
	check("company", &co, func() { defCompany(&co) }, func(l *lineCtx) any { return convCompany(&co, l) })
	var se engine.Security
	check("security", &se, func() { defSecurity(&se) }, func(l *lineCtx) any { return convSecurity(&se, l) })
	var rn engine.TickerRename
	check("rename", &rn, func() { defRename(&rn) }, func(l *lineCtx) any { return convRename(&rn, l) })
	var ix indexIn
	check("index", &ix, func() { defIndex(&ix) }, func(l *lineCtx) any { return convIndex(&ix, l) })
	var rp reportIn
	check("report", &rp, func() { defReport(&rp) }, func(l *lineCtx) any { return convReport(&rp, l) })
	var sh engine.SharesPoint
	check("shares", &sh, func() { defShares(&sh) }, func(l *lineCtx) any { return convShares(&sh, l) })
	var ca cashActionIn
	check("cash", &ca, func() { defCashAction(&ca) }, func(l *lineCtx) any { return convCashAction(&ca, l) })
	var sa shareActionIn
	check("share action", &sa, func() { defShareAction(&sa) }, func(l *lineCtx) any { return convShareAction(&sa, l) })
	var fr engine.FundReport
	check("fund", &fr, func() { defFundReport(&fr) }, func(l *lineCtx) any { return convFundReport(&fr, l) })
	var ir insiderIn
	check("insider", &ir, func() { defInsider(&ir) }, func(l *lineCtx) any { return convInsider(&ir, l) })
	var dc engine.Document
	check("document", &dc, func() { defDocument(&dc) }, func(l *lineCtx) any { return convDocument(&dc, l) })
}

func decodeAny(js string, v any) (string, string) {
	switch p := v.(type) {
	case *engine.Company:
		return decodeLine([]byte(js), p)
	case *engine.Security:
		return decodeLine([]byte(js), p)
	case *engine.TickerRename:
		return decodeLine([]byte(js), p)
	case *indexIn:
		return decodeLine([]byte(js), p)
	case *reportIn:
		return decodeLine([]byte(js), p)
	case *engine.SharesPoint:
		return decodeLine([]byte(js), p)
	case *cashActionIn:
		return decodeLine([]byte(js), p)
	case *shareActionIn:
		return decodeLine([]byte(js), p)
	case *engine.FundReport:
		return decodeLine([]byte(js), p)
	case *insiderIn:
		return decodeLine([]byte(js), p)
	case *engine.Document:
		return decodeLine([]byte(js), p)
	}
	panic("decodeAny: unknown type")
}

// TestShadowTypesMatchModel checks that each decoding type used for
// nested arrays has exactly the JSON fields of the model type it stands
// for, so that a field added to engine's model is not silently dropped.
func TestShadowTypesMatchModel(t *testing.T) {
	pairs := []struct{ shadow, model any }{
		{accountIn{}, accountOut{}},
		{memberIn{}, engine.IndexMember{}},
		{installmentIn{}, engine.Installment{}},
		{legIn{}, engine.Leg{}},
		{moveIn{}, engine.InsiderMove{}},
		{reportIn{}, engine.Report{}},
		{indexIn{}, engine.Index{}},
		{cashActionIn{}, engine.CashAction{}},
		{shareActionIn{}, engine.ShareAction{}},
		{insiderIn{}, engine.InsiderReport{}},
	}
	// engine.Account is JSON through its own methods: its object's keys.
	js, err := json.Marshal(engine.NewAccount("1.01", "Caixa", true, 1))
	if err != nil {
		t.Fatal(err)
	}
	var keys map[string]any
	if err := json.Unmarshal(js, &keys); err != nil {
		t.Fatal(err)
	}
	if want := jsonFields(reflect.TypeOf(accountIn{})); len(keys) != len(want) {
		t.Errorf("engine.Account marshals %s; want the fields of accountIn %v", js, want)
	} else {
		for k := range keys {
			if _, ok := want[k]; !ok {
				t.Errorf("engine.Account marshals field %q that accountIn lacks", k)
			}
		}
	}
	for _, p := range pairs {
		a, b := jsonFields(reflect.TypeOf(p.shadow)), jsonFields(reflect.TypeOf(p.model))
		for k := range b {
			if _, ok := a[k]; !ok {
				t.Errorf("%T lacks field %q of %T", p.shadow, k, p.model)
			}
		}
		for k := range a {
			if _, ok := b[k]; !ok {
				t.Errorf("%T has field %q that %T lacks", p.shadow, k, p.model)
			}
		}
	}
}

// TestMarshalMatchesStdlib guards the JSON library used for writing
// against encoding/json on every entity of the small bundle.
func TestMarshalMatchesStdlib(t *testing.T) {
	u := mustRead(t, smallDir)
	var vals []any
	vals = append(vals, &u.Meta)
	for i := range u.Sectors {
		vals = append(vals, &u.Sectors[i])
	}
	for i := range u.Companies {
		vals = append(vals, &u.Companies[i])
	}
	for i := range u.Securities {
		vals = append(vals, &u.Securities[i])
	}
	for i := range u.Renames {
		vals = append(vals, &u.Renames[i])
	}
	for i := range u.Indexes {
		vals = append(vals, &u.Indexes[i])
	}
	for i := range u.Reports {
		vals = append(vals, &u.Reports[i])
	}
	for i := range u.Shares {
		vals = append(vals, &u.Shares[i])
	}
	for i := range u.CashActions {
		vals = append(vals, &u.CashActions[i])
	}
	for i := range u.ShareActions {
		vals = append(vals, &u.ShareActions[i])
	}
	for i := range u.FundReports {
		vals = append(vals, &u.FundReports[i])
	}
	for i := range u.InsiderReports {
		vals = append(vals, &u.InsiderReports[i])
	}
	for i := range u.Documents {
		vals = append(vals, &u.Documents[i])
	}
	for _, v := range vals {
		a, err1 := json.Marshal(v)
		b, err2 := stdjson.Marshal(v)
		if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
			t.Errorf("%T:\n%s (%v)\n%s (%v)", v, a, err1, b, err2)
		}
	}
}
