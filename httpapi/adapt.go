package httpapi

import (
	"time"

	"github.com/pregao/pregao/engine"
)

func datasetAsOf(ds *engine.Dataset) time.Time { return ds.AsOf() }
