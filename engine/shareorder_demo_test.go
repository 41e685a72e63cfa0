package engine_test

import (
	"testing"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/demo"
)

// On the demo, the splits cashAt orders by the positions Build keeps are
// in the order of a scan of the Universe.
func TestShareActionUniverseOrderDemo(t *testing.T) {
	ds, err := engine.Build(demo.Generate(1, 1))
	if err != nil {
		t.Fatal(err)
	}
	n := engine.CheckShareActionOrder(t, ds)
	t.Logf("%d issuers list their share actions out of the Universe's order", n)
}
