package engine

import "sync/atomic"

// Store publishes Datasets. Its methods are safe for concurrent use; the
// zero Store is ready and holds no Dataset.
type Store struct{ cur atomic.Pointer[Dataset] }

// Current returns the latest published Dataset, or nil before the first
// Publish. It never blocks. A request calls Current once and keeps the
// pointer so one response never mixes two Datasets.
func (s *Store) Current() *Dataset { return s.cur.Load() }

// Publish makes d visible to new readers and returns the previous Dataset
// (nil the first time). d must be complete (from Build) and must not be
// modified afterwards.
func (s *Store) Publish(d *Dataset) *Dataset { return s.cur.Swap(d) }
