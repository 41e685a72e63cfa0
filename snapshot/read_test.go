package snapshot

import (
	"os"
	"path/filepath"
	"testing"
)

// Both decode paths (every section decompressed first, or each decoded
// as soon as it decompresses) and both sources (memory, file) give the
// same Universe and header.
func TestDecodePaths(t *testing.T) {
	defer func(r int64) { pipelineRatio = r }(pipelineRatio)
	path := filepath.Join(t.TempDir(), "s.snap")
	if _, err := BuildFromBundle(smallBundle(t), path, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pipelineRatio = 0
	want, wh, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(wh.Sections) < 10 {
		t.Fatalf("%d sections, want a snapshot with many", len(wh.Sections))
	}
	for _, ratio := range []int64{0, 1 << 40} {
		pipelineRatio = ratio
		got, gh, err := Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		if d := diff(want, got); d != "" {
			t.Errorf("ratio %d: Decode differs at %s", ratio, d)
		}
		if d := diff(wh, gh); d != "" {
			t.Errorf("ratio %d: Decode header differs at %s", ratio, d)
		}
		got, gh, err = ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if d := diff(want, got); d != "" {
			t.Errorf("ratio %d: ReadFile differs at %s", ratio, d)
		}
		if d := diff(wh, gh); d != "" {
			t.Errorf("ratio %d: ReadFile header differs at %s", ratio, d)
		}
	}
}
