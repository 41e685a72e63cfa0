package snapshot

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/pregao/pregao/engine"
)

// sourceRefsUniverse has fund reports, insider reports and fund ratio
// points citing lists drawn from a few, in no order: lists equal but for
// a nanosecond, a zero time or a name; nil and empty lists.
func sourceRefsUniverse(seed uint64) *engine.Universe {
	r := rand.New(rand.NewPCG(seed, 5))
	t0 := time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)
	src := func(i int) engine.Source {
		return engine.Source{VisualizationURL: engine.URLOf(fmt.Sprintf("https://x/%d", i%5)), DownloadURL: engine.URLOf("d"), PublishedAt: t0.Add(time.Duration(i%3) * time.Hour), RetrievedAt: t0, Name: "n"}
	}
	pool := [][]engine.Source{nil, {}, {src(0)}, {src(1)}, {src(0), src(1)}, {src(1), src(0)}, {src(2)}}
	nano := src(2)
	nano.PublishedAt = nano.PublishedAt.Add(time.Nanosecond)
	zero := src(2)
	zero.RetrievedAt = time.Time{}
	name := src(2)
	name.Name = "m"
	pool = append(pool, []engine.Source{nano}, []engine.Source{zero}, []engine.Source{name}, []engine.Source{src(3), src(4), src(5)})
	pick := func() []engine.Source {
		l := pool[r.IntN(len(pool))]
		if l == nil {
			return nil
		}
		return append([]engine.Source{}, l...) // equal lists, not one slice
	}
	u := handUniverse()
	u.FundReports, u.InsiderReports, u.Derived.FundRatios, u.Derived.FundSources = nil, nil, nil, nil
	for i := range 60 {
		u.FundReports = append(u.FundReports, engine.FundReport{FundID: "2", ReferenceDate: engine.Date(19000 + i), Version: 1, PublishDate: t0.Add(time.Duration(r.IntN(1e6)) * time.Second), Sources: pick()})
		u.InsiderReports = append(u.InsiderReports, engine.InsiderReport{CompanyID: "33000167000101", ReferenceDate: engine.Date(19000 + i), Version: 1, PublishDate: t0, Sources: pick()})
		addFundPoint(&u.Derived, engine.FundRatioPoint{FundID: engine.Intern("2"), Indicator: uint16(i % 2), ReferenceDate: engine.Date(19000 + i), PublishDate: engine.MakeStamp(1.7e9+int64(r.IntN(1e6)), 0), Value: 1}, pick())
	}
	return u
}

// Format 6 names a list of sources written before in the part: it reads
// back as format 5 does, lists naming one list sharing it, and the part
// is smaller.
func TestSourceRefsRoundTrip(t *testing.T) {
	for seed := range uint64(10) {
		u := sourceRefsUniverse(seed)
		b5 := mustWrite(t, u, WriteOptions{Level: 1})
		b6 := mustWrite(t, u, WriteOptions{Version: 6, Level: 1})
		u5, h5 := mustDecode(t, b5)
		u6, h6 := mustDecode(t, b6)
		for _, k := range []string{"fund_reports", "insider_reports", "fund_ratios"} {
			if d := diff(sectionOf(u5, k), sectionOf(u6, k)); d != "" {
				t.Fatalf("seed %d: %s differ at %s", seed, k, d)
			}
			if raw := func(h Header) (n int64) {
				for _, s := range h.Sections {
					if s.Name == k {
						n += s.Raw
					}
				}
				return n
			}; raw(h6) >= raw(h5) {
				t.Errorf("seed %d: %s: %d raw bytes in format 6, %d in 5", seed, k, raw(h6), raw(h5))
			}
		}
		for _, k := range []string{"fund_reports", "insider_reports", "fund_ratios"} {
			if d := diff(sectionOf(u, k), sectionOf(u6, k)); d != "" {
				t.Fatalf("seed %d: %s read back differ at %s", seed, k, d)
			}
		}
		// Equal lists of one part are one slice.
		seen := map[string]*engine.Source{}
		for _, p := range fundPoints(u6) {
			if len(p.Sources) == 0 {
				continue
			}
			k := fmt.Sprint(p.Sources)
			if q, ok := seen[k]; ok && q != &p.Sources[0] {
				t.Fatalf("seed %d: two copies of the list %s", seed, k)
			}
			seen[k] = &p.Sources[0]
		}
		// ... and one list of Derived.FundSources.
		if n, m := len(u6.Derived.FundSources), len(seen); n > m+1 { // (+1: an empty list)
			t.Fatalf("seed %d: %d fund source lists for %d distinct", seed, n, m)
		}
		if again := mustWrite(t, u6, WriteOptions{Version: 6, Level: 1}); string(again) != string(b6) {
			t.Fatalf("seed %d: the decoded universe writes other bytes", seed)
		}
	}
}

func sectionOf(u *engine.Universe, kind string) any {
	switch kind {
	case "fund_reports":
		return u.FundReports
	case "insider_reports":
		return u.InsiderReports
	}
	return fundPoints(u)
}

// A part naming a list that was not read before, or holding other than
// its declared total of sources, is refused.
func TestSourceRefsRefused(t *testing.T) {
	list := []engine.Source{{Name: "a", PublishedAt: time.Unix(5, 0).UTC()}}
	e := newPenc(1)
	e.version = columnsVersion
	encSourceRefs(e, list, 0)
	encSourceRefs(e, list, 0)
	encSourceRefs(e, nil, 0)
	encSourceRefs(e, []engine.Source{}, 0)
	good := e.body
	if good[len(good)-4] != 1 || good[len(good)-3] != 0 {
		t.Fatalf("the second list is not a reference: % x", good)
	}
	read := func(b []byte, total int) (*pdec, [][]engine.Source) {
		d := &pdec{b: b, ls: &loadState{version: columnsVersion}, strs: e.list}
		p := &sourcePool{total: total, seen: map[uint64][]engine.Source{}}
		var out [][]engine.Source
		for range 4 {
			out = append(out, p.takeRef(d))
		}
		if d.err == nil && d.remaining() != 0 {
			d.fail("%d bytes left", d.remaining())
		}
		p.done(d)
		return d, out
	}
	d, out := read(good, 1)
	if d.err != nil {
		t.Fatal(d.err)
	}
	if &out[0][0] != &out[1][0] || out[2] != nil || out[3] == nil || len(out[3]) != 0 {
		t.Fatalf("lists %v", out)
	}
	for _, c := range []struct {
		name  string
		b     []byte
		total int
		want  string
	}{
		{"list not read before", append(append([]byte{}, good[:len(good)-4]...), 1, 1, 0, 2), 1, "list 1 named, 1 read before"},
		{"more than the total", good, 0, "beyond the declared total"},
		{"less than the total", good, 2, "declared total 2, used 1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, _ := read(c.b, c.total)
			if d.err == nil || !strings.Contains(d.err.Error(), c.want) {
				t.Fatalf("error %v, want %q", d.err, c.want)
			}
		})
	}
}
