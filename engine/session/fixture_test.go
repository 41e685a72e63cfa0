package session

import (
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/demo"
)

// fixtureSize is the small demo the tests hold a session of (the size
// cmd/pregao's live tests replay).
var fixtureSize = demo.Size{Companies: 40, SponsoredBDRs: 3, UnsponsoredBDRs: 3, FIIs: 15, ETFs: 5, IntradayTickers: 6, IntradaySessions: 3,
	ReportsFrom: 2025, FundReportsFrom: 2026, EventsFrom: 2026, HistoryFrom: 2024}

// fixture is the small demo built with its last session held back
// (base) and in full (full: the snapshot of the session's day), the
// session's day and a ticker that trades in it.
type fixture struct {
	base, full *engine.Dataset
	day        engine.Date
	ticker     string
}

var fixtureOnce struct {
	sync.Once
	f   *fixture
	err error
}

// fixtureOf builds the fixture once per test binary. Datasets are
// immutable: each test publishes them in a Store of its own.
func fixtureOf(tb testing.TB) *fixture {
	tb.Helper()
	fixtureOnce.Do(func() {
		u, sess := demo.GenerateSession(3, fixtureSize, nil)
		f := &fixture{day: sess.Day}
		var err error
		if f.base, err = engine.Build(demo.HoldBack(u, sess)); err != nil {
			fixtureOnce.err = err
			return
		}
		if f.full, err = engine.Build(demo.GenerateSize(3, fixtureSize)); err != nil {
			fixtureOnce.err = err
			return
		}
		for _, t := range sess.Tickers() {
			if a, ok := f.base.Asset(t); ok && a.StockType != engine.ClassMacro {
				f.ticker = t
				break
			}
		}
		fixtureOnce.f = f
	})
	if fixtureOnce.err != nil {
		tb.Fatal(fixtureOnce.err)
	}
	return fixtureOnce.f
}

// storeOf returns a Store with d published.
func storeOf(d *engine.Dataset) *engine.Store {
	s := &engine.Store{}
	s.Publish(d)
	return s
}

// testLog is a logger for tests: discarded, or on stderr with
// PREGAO_TEST_LOG=1.
func testLog(w io.Writer) *slog.Logger {
	if os.Getenv("PREGAO_TEST_LOG") != "" {
		w = os.Stderr
	}
	if w == nil {
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(slog.NewTextHandler(w, nil))
}

// lockedBuilder is a strings.Builder safe for concurrent use: a log
// written by the session's goroutines and read by a test.
type lockedBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuilder) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuilder) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// gaugeValue returns the value of the gauge name gathered from reg.
func gaugeValue(tb testing.TB, reg *prometheus.Registry, name string) float64 {
	tb.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		tb.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) == 1 {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	tb.Fatalf("no gauge %s", name)
	return 0
}

// counterValue returns the value of counter name{label=value} gathered
// from reg.
func counterValue(tb testing.TB, reg *prometheus.Registry, name, label, value string) float64 {
	tb.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		tb.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == label && l.GetValue() == value {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	tb.Fatalf("no counter %s{%s=%q}", name, label, value)
	return 0
}
