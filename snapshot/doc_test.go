package snapshot

import (
	"os"
	"regexp"
	"strconv"
	"testing"
)

// The package documentation and docs/snapshot-format.md state the format
// version this package writes (FormatVersion), so that the prose cannot
// fall behind a format change.
func TestDocsStateFormatVersion(t *testing.T) {
	for _, c := range []struct {
		file string
		re   *regexp.Regexp
		min  int // occurrences expected at least
	}{
		{"doc.go", regexp.MustCompile(`format version (\d+)`), 1},
		{"doc.go", regexp.MustCompile(`uint16 format version +(\d+)`), 1},
		{"../docs/snapshot-format.md", regexp.MustCompile(`format version (\d+)`), 1},
		{"../docs/snapshot-format.md", regexp.MustCompile(`currently (\d+)`), 1},
	} {
		b, err := os.ReadFile(c.file)
		if err != nil {
			t.Fatal(err)
		}
		ms := c.re.FindAllSubmatch(b, -1)
		if len(ms) < c.min {
			t.Errorf("%s: %q found %d times, want at least %d", c.file, c.re, len(ms), c.min)
		}
		for _, m := range ms {
			if v, _ := strconv.Atoi(string(m[1])); v != int(FormatVersion) {
				t.Errorf("%s: %q says version %d, FormatVersion is %d", c.file, m[0], v, FormatVersion)
			}
		}
	}
}
