package httpapi

import (
	"errors"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pregao/pregao/engine"
)

// pregao_snapshot_failed is 1 once the served snapshot fails (Fail: a
// read of its mapped file faulted), which PregaoSnapshotDamaged reads,
// and 0 again once another snapshot is published.
func TestSnapshotFailedMetric(t *testing.T) {
	store := &engine.Store{}
	reg := prometheus.NewRegistry()
	New(DefaultConfig(), store, testKeys(t), nil, reg, nil)
	value := func() float64 {
		t.Helper()
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			if mf.GetName() == "pregao_snapshot_failed" {
				return mf.Metric[0].GetGauge().GetValue()
			}
		}
		t.Fatal("no pregao_snapshot_failed")
		return 0
	}
	ds := freshSmall(t)
	store.Publish(ds)
	if v := value(); v != 0 {
		t.Errorf("a sound snapshot: %v", v)
	}
	ds.Fail(errors.New("a read of a mapped file faulted"))
	if v := value(); v != 1 {
		t.Errorf("after Fail: %v", v)
	}
	store.Publish(freshSmall(t))
	if v := value(); v != 0 {
		t.Errorf("after the next publish: %v", v)
	}
}
