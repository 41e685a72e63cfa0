package snapshot

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"
	"time"

	"github.com/pregao/pregao/engine"
)

// TestStampCodec checks that a Stamp is written exactly as its time.Time
// and read back to the same Stamp.
func TestStampCodec(t *testing.T) {
	times := []time.Time{
		{},
		time.Unix(0, 0).UTC(),
		time.Date(2024, 5, 10, 18, 30, 0, 0, time.UTC),
		time.Date(2024, 5, 10, 18, 30, 0, 123456789, time.UTC),
		time.Date(1901, 2, 3, 4, 5, 6, 7, time.UTC),
		time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC),
	}
	et, es := newPenc(0), newPenc(0)
	for _, tm := range times {
		et.time(tm)
		es.stamp(engine.StampOf(tm))
	}
	if et.err != nil || es.err != nil {
		t.Fatal(et.err, es.err)
	}
	if !bytes.Equal(et.body, es.body) {
		t.Fatalf("stamp encoding %x differs from time encoding %x", es.body, et.body)
	}
	d := &pdec{b: es.body}
	for _, tm := range times {
		if got, want := d.stamp(), engine.StampOf(tm); got != want {
			t.Fatalf("read %v, want %v", got.Time(), tm)
		}
	}
	if d.err != nil || d.remaining() != 0 {
		t.Fatalf("err %v, %d bytes left", d.err, d.remaining())
	}
}

func TestDecodeFrequency(t *testing.T) {
	strs := []string{engine.FreqTTM, "", "WEEKLY", engine.FreqYTD}
	for _, tc := range []struct {
		idx  uint64
		want engine.Frequency
		err  string
	}{
		{0, engine.FrequencyTTM, ""},
		{1, engine.FrequencyNone, ""},
		{3, engine.FrequencyYTD, ""},
		{2, 0, `unknown frequency "WEEKLY"`},
		{9, 0, "string index 9 beyond table of 4"},
	} {
		// Twice: the second read comes from the per-table cache.
		b := binary.AppendUvarint(nil, tc.idx)
		d := &pdec{b: append(b, b...), strs: strs}
		for range 2 {
			got := d.frequency()
			if tc.err != "" {
				if d.err == nil || !strings.Contains(d.err.Error(), tc.err) {
					t.Fatalf("index %d: err %v, want %q", tc.idx, d.err, tc.err)
				}
				break
			}
			if d.err != nil || got != tc.want {
				t.Fatalf("index %d: %v, %v; want %v", tc.idx, got, d.err, tc.want)
			}
		}
	}
}

func TestDecodeShareClass(t *testing.T) {
	strs := []string{engine.ClassPS, "", "ON", engine.ClassUnit}
	for _, tc := range []struct {
		idx  uint64
		want engine.ShareClass
		err  string
	}{
		{0, engine.ShareClassPS, ""},
		{1, engine.ShareClassNone, ""},
		{3, engine.ShareClassUnit, ""},
		{2, 0, `unknown share class "ON"`},
		{4, 0, "string index 4 beyond table of 4"},
	} {
		b := binary.AppendUvarint(nil, tc.idx)
		d := &pdec{b: append(b, b...), strs: strs}
		for range 2 {
			got := d.shareClass()
			if tc.err != "" {
				if d.err == nil || !strings.Contains(d.err.Error(), tc.err) {
					t.Fatalf("index %d: err %v, want %q", tc.idx, d.err, tc.err)
				}
				break
			}
			if d.err != nil || got != tc.want {
				t.Fatalf("index %d: %v, %v; want %v", tc.idx, got, d.err, tc.want)
			}
		}
	}
}
