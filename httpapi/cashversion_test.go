package httpapi

import (
	"encoding/json"
	"net/url"
	"reflect"
	"testing"
	"time"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/bundle"
)

// TestCashSameVersionAsOf: an event republished under the same version
// number (ENHZ-2024-JCP1-PS, version 1 twice) lists one row, the later
// published, without as_of and with as_of at the snapshot's as_of (the
// same answer), and the earlier row at an as_of between the two.
func TestCashSameVersionAsOf(t *testing.T) {
	u, err := bundle.Read(smallBundle)
	if err != nil {
		t.Fatal(err)
	}
	var rep engine.CashAction
	for _, a := range u.CashActions {
		if a.EventID == "ENHZ-2024-JCP1-PS" {
			rep = a
		}
	}
	if rep.ID == "" {
		t.Fatal("no ENHZ-2024-JCP1-PS in the bundle")
	}
	orig := rep.PublishDate
	rep.ID, rep.PublishDate, rep.DeclaredValue = "ENHZ-2024-JCP1-PS-v1-rep", engine.StampOf(orig.Time().Add(48*time.Hour)), rep.DeclaredValue+0.01
	if !rep.PublishDate.Before(engine.StampOf(u.Meta.AsOf)) {
		t.Fatalf("republication %v after the snapshot's as_of %v", rep.PublishDate, u.Meta.AsOf)
	}
	u.CashActions = append([]engine.CashAction{rep}, u.CashActions...)
	ts := serverOf(t, buildDemoDS(t, u))
	ids := func(asOf time.Time) ([]string, []byte) {
		t.Helper()
		path := "/v2/companies/ENHZ4/cash-corporate-actions"
		if !asOf.IsZero() {
			path += "?as_of=" + url.QueryEscape(asOf.In(engine.SaoPaulo).Format("2006-01-02T15:04:05"))
		}
		w := ts.do("GET", path, testKeyDelayed, "")
		if w.Code != 200 {
			t.Fatalf("GET %s: %d %s", path, w.Code, w.Body)
		}
		var items []struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(w.Body.Bytes(), &items); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, it := range items {
			out = append(out, it.ID)
		}
		return out, w.Body.Bytes()
	}
	now, nowBody := ids(time.Time{})
	_, atBody := ids(u.Meta.AsOf)
	if want := []string{"ENHZ-2024-JCP1-PS-v1-rep"}; !reflect.DeepEqual(now, want) {
		t.Errorf("without as_of: %v, want %v", now, want)
	}
	if string(atBody) != string(nowBody) {
		t.Errorf("as_of at the snapshot's as_of: %s\nwithout: %s", atBody, nowBody)
	}
	if got, _ := ids(orig.Time().Add(time.Hour)); !reflect.DeepEqual(got, []string{"ENHZ-2024-JCP1-PS-v1"}) {
		t.Errorf("as_of between the two publications: %v, want [ENHZ-2024-JCP1-PS-v1]", got)
	}
}
