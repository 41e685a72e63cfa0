package snapshot

import (
	"bytes"
	"errors"
	"testing"

	"github.com/pregao/pregao/engine"
)

// A column section written a block at a time is the one made in memory:
// the same bytes, blocks and index, with empty series, a wide one,
// series larger than a block, and sections of empty series only.
func TestColStreamIsAppend(t *testing.T) {
	big := synthUniverse(1, 12000, 3, 9000, 0) // one daily series and three intraday ones larger than a block
	daily := append(columnSeries(), big.Daily...)
	daily = append(daily, engine.Series{Ticker: "EMPT3"}, daily[2])
	intraday := append(big.Intraday, engine.Intraday{Ticker: "EMPT3"})
	intraday = append(intraday, synthUniverse(1, 1, 30, 400, 0).Intraday...)
	cases := []struct {
		name    string
		daily   []engine.Series
		intra   []engine.Intraday
		isDaily bool
	}{
		{"daily", daily, nil, true},
		{"daily, empty only", []engine.Series{{Ticker: "A3"}, {Ticker: "B3"}}, nil, true},
		{"daily, none", nil, nil, true},
		{"intraday", nil, intraday, false},
		{"intraday, empty only", nil, []engine.Intraday{{Ticker: "A3"}}, false},
	}
	for _, c := range cases {
		var want []byte
		var wix dailyIndex
		var got bytes.Buffer
		puts := 0
		put := func(b []byte) error {
			puts++
			got.Write(b)
			return nil
		}
		var n int64
		var ix dailyIndex
		var err error
		if c.isDaily {
			want, wix = appendDailyColumns(nil, c.daily)
			n, ix, err = streamDailyColumns(c.daily, put)
		} else {
			want, wix = appendIntradayColumns(nil, c.intra)
			n, ix, err = streamIntradayColumns(c.intra, put)
		}
		if err != nil {
			t.Fatal(err)
		}
		if n != int64(len(want)) || !bytes.Equal(got.Bytes(), want) {
			t.Errorf("%s: %d bytes (size %d), want %d: not the same section", c.name, got.Len(), n, len(want))
		}
		if d := diff(wix, ix); d != "" {
			t.Errorf("%s: index differs at %s", c.name, d)
		}
		if puts != len(ix.Blocks) {
			t.Errorf("%s: %d writes for %d blocks", c.name, puts, len(ix.Blocks))
		}
		if c.name == "daily" && len(ix.Blocks) < 4 {
			t.Errorf("%s: %d blocks, want several", c.name, len(ix.Blocks))
		}
	}
	boom := errors.New("disk full")
	if _, _, err := streamDailyColumns(daily, func([]byte) error { return boom }); !errors.Is(err, boom) {
		t.Errorf("a failed write: err = %v", err)
	}
}
