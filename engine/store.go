package engine

import (
	"fmt"
	"sync"
	"sync/atomic"
)

// View is what a request sees: the immutable Dataset and, when a feed
// runs, the live session beside it (nil: none). Both are immutable; a View
// is published whole, so a request that loads it once never mixes two
// states.
type View struct {
	Base *Dataset
	Live *Live
}

// Store publishes Views. Its methods are safe for concurrent use; readers
// never block (Current and View are one atomic load), writers (Publish
// and the live session's) are serialized among themselves. The zero Store
// is ready and holds nothing.
type Store struct {
	mu  sync.Mutex // writers
	cur atomic.Pointer[View]
}

// View returns the latest published View, or nil before the first
// Publish. It never blocks. A request calls View (or Current) once and
// keeps the pointer.
func (s *Store) View() *View { return s.cur.Load() }

// Current returns the Dataset of the latest View, or nil before the first
// Publish. It never blocks.
func (s *Store) Current() *Dataset {
	if v := s.cur.Load(); v != nil {
		return v.Base
	}
	return nil
}

// Publish makes d visible to new readers and returns the previous Dataset
// (nil the first time). d must be complete (from Build) and must not be
// modified afterwards. A live session goes on over d: its bars are bound
// to d's assets, and those of tickers whose history in d reaches the
// session are dropped (d covers them: the roll).
func (s *Store) Publish(d *Dataset) *Dataset {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.cur.Load()
	v := &View{Base: d}
	if old != nil && old.Live != nil {
		v.Live = old.Live.rebind(d)
	}
	s.cur.Store(v)
	if old == nil {
		return nil
	}
	return old.Base
}

// StartLive begins an empty live session sd over the current Dataset,
// replacing any session. It fails before the first Publish.
func (s *Store) StartLive(sd Date) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.cur.Load()
	if old == nil {
		return fmt.Errorf("live session %s: no dataset published", sd)
	}
	s.cur.Store(&View{Base: old.Base, Live: newLive(old.Base, sd)})
	return nil
}

// EndLive drops the live session (after its roll into a Dataset).
func (s *Store) EndLive() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if old := s.cur.Load(); old != nil && old.Live != nil {
		s.cur.Store(&View{Base: old.Base})
	}
}

// ApplyLive applies batch b to the live session and publishes the result.
// It reports false, changing nothing, for a redelivered batch (Seq not
// above the last applied). A batch for another session, or with a bar a
// minute cannot hold, is refused whole (an error wrapping ErrLiveBatch);
// so is any batch while no session is started.
func (s *Store) ApplyLive(b *LiveBatch) (applied bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.cur.Load()
	if old == nil || old.Live == nil {
		return false, fmt.Errorf("%w: batch %d: no live session started", ErrLiveBatch, b.Seq)
	}
	l := old.Live
	if err := b.check(l.Session); err != nil {
		return false, err
	}
	if b.Seq <= l.Seq {
		return false, nil
	}
	s.cur.Store(&View{Base: old.Base, Live: l.apply(b)})
	return true, nil
}
