package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
)

// TestDemoMoneyExact: on the scale-1 demo, every cash action's value is
// the float nearest to declared_value + monetary_correction computed
// exactly, every adjusted amount the float nearest to the exact quotient
// of its amount by adjustment_factor, and the CSV cells are the JSON's
// text (4.60861049 beside 4.60861049, never 4.608610489999999).
func TestDemoMoneyExact(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("builds the scale-1 demo (make test runs it in its pass without -race)")
	}
	ds, err := demoDataset()
	if err != nil {
		t.Fatal(err)
	}
	api, key := apiWithKey(t, ds)
	get := func(target string) []byte {
		r := httptest.NewRequest("GET", target, nil)
		r.Header.Set("Authorization", "Bearer "+key)
		w := httptest.NewRecorder()
		api.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			t.Fatalf("GET %s: %d %.200s", target, w.Code, w.Body)
		}
		return w.Body.Bytes()
	}
	const target = "/v2/companies/cash-corporate-actions?bdr=true&current=false"
	dec := json.NewDecoder(bytes.NewReader(get(target)))
	dec.UseNumber()
	var items []map[string]any
	if err := dec.Decode(&items); err != nil {
		t.Fatal(err)
	}
	rat := func(v any) (*big.Rat, bool) {
		n, ok := v.(json.Number)
		if !ok {
			return nil, false
		}
		r, ok := new(big.Rat).SetString(string(n))
		return r, ok
	}
	nearest := func(r *big.Rat) string {
		f, _ := r.Float64()
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	bad, checked := 0, 0
	check := func(id, field string, got any, want *big.Rat) {
		checked++
		if g, ok := got.(json.Number); !ok || string(g) != nearest(want) {
			if bad++; bad <= 10 {
				t.Errorf("%s: %s %v, the exact result is %s", id, field, got, nearest(want))
			}
		}
	}
	for _, it := range items {
		id, _ := it["id"].(string)
		d, ok1 := rat(it["declared_value"])
		c, ok2 := rat(it["monetary_correction"])
		f, ok3 := rat(it["adjustment_factor"])
		if !ok1 || !ok2 || !ok3 || f.Sign() == 0 {
			continue
		}
		v := new(big.Rat).Add(d, c)
		check(id, "value", it["value"], v)
		vr, _ := rat(it["value"])
		check(id, "adjusted_value", it["adjusted_value"], new(big.Rat).Quo(vr, f))
		check(id, "adjusted_declared_value", it["adjusted_declared_value"], new(big.Rat).Quo(d, f))
		if n, ok := rat(it["net_value"]); ok {
			check(id, "adjusted_net_value", it["adjusted_net_value"], new(big.Rat).Quo(n, f))
		}
	}
	if checked < 1000 {
		t.Fatalf("%d amounts checked of %d actions: the demo lost its cash actions", checked, len(items))
	}
	if bad > 0 {
		t.Errorf("%d of %d amounts are not the exact result", bad, checked)
	}

	// The CSV is the JSON's text.
	js := json.NewDecoder(bytes.NewReader(get(target + "&limit=500")))
	js.UseNumber()
	var page []map[string]any
	if err := js.Decode(&page); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(bytes.NewReader(get(target + "&limit=500&format=csv"))).ReadAll()
	if err != nil || len(rows) != len(page)+1 {
		t.Fatalf("CSV: %d rows for %d items: %v", len(rows), len(page), err)
	}
	for i, it := range page {
		for j, col := range rows[0] {
			if n, ok := it[col].(json.Number); ok && rows[i+1][j] != string(n) {
				t.Errorf("item %d %s: CSV %q, JSON %s", i, col, rows[i+1][j], n)
			}
		}
	}
}
