package bundle

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDocExamples reads the examples of docs/data-format.md as a bundle:
// under each "## <file name>" heading, the code blocks are that file's
// content. The examples must form a valid bundle.
func TestDocExamples(t *testing.T) {
	b, err := os.ReadFile("../../docs/data-format.md")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	section, inCode := "", false
	for _, l := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(l, "## "):
			section = strings.TrimPrefix(l, "## ")
		case strings.HasPrefix(l, "```"):
			inCode = !inCode
		case inCode && fileOrder(section) < len(Files):
			if strings.HasSuffix(section, ".csv") && files[section] != "" && (l == DailyHeader || l == IntradayHeader) {
				continue // the header shown alone above the example
			}
			files[section] += l + "\n"
		}
	}
	for _, f := range Files {
		if _, ok := files[f]; !ok {
			t.Errorf("no example for %s", f)
		}
	}
	dir := t.TempDir()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	u := mustRead(t, dir)
	if len(u.Companies) != 4 || len(u.Daily) != 3 || len(u.ShareActions) != 2 {
		t.Errorf("examples: %d companies, %d series, %d share actions", len(u.Companies), len(u.Daily), len(u.ShareActions))
	}
}
