package flatfiles

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
)

var updateDoc = flag.Bool("update-files-doc", false, "rewrite the dataset tables of docs/files.md from the schemas")

const (
	docPath  = "../../docs/files.md"
	docBegin = "<!-- datasets: generated from snapshot/flatfiles by go test -update-files-doc; do not edit -->\n"
	docEnd   = "<!-- datasets end -->\n"
)

// datasetsDoc renders every dataset's section of docs/files.md: what it
// holds, its files, its sort order and its columns.
func datasetsDoc() []byte {
	var b bytes.Buffer
	for _, d := range ourDatasets {
		fmt.Fprintf(&b, "### %s\n\n", d.name)
		fmt.Fprintf(&b, "%s.\n\n", strings.ToUpper(d.doc[:1])+d.doc[1:])
		switch d.split {
		case "year":
			fmt.Fprintf(&b, "Files: `%s-YYYY.parquet` and `%s-YYYY.csv.gz`, one per calendar year.", d.name, d.name)
		case "session":
			fmt.Fprintf(&b, "Files: `%s-YYYY-MM-DD.parquet` and `%s-YYYY-MM-DD.csv.gz`, one per session.", d.name, d.name)
		default:
			fmt.Fprintf(&b, "Files: `%s.parquet` and `%s.csv.gz`.", d.name, d.name)
		}
		fmt.Fprintf(&b, " Sorted by %s.", strings.Join(d.schema.sortBy, ", "))
		if d.schema.date != "" {
			fmt.Fprintf(&b, " The manifest's date range is that of `%s`.", d.schema.date)
		}
		if d.priced {
			b.WriteString(" Cut at the plan's last session (Plans).")
		}
		b.WriteString("\n\n| column | type | meaning |\n| --- | --- | --- |\n")
		for _, c := range d.schema.cols {
			fmt.Fprintf(&b, "| `%s` | %s | %s |\n", c.name, c.typ.typeName(), strings.ReplaceAll(c.desc, "|", "\\|"))
		}
		b.WriteString("\n")
	}
	return b.Bytes()
}

// TestFilesDoc holds docs/files.md's dataset sections to the schemas the
// export writes; go test -update-files-doc rewrites them.
func TestFilesDoc(t *testing.T) {
	doc, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(doc, []byte(docBegin))
	j := bytes.Index(doc, []byte(docEnd))
	if i < 0 || j < i {
		t.Fatalf("%s: no %q ... %q block", docPath, docBegin, docEnd)
	}
	want := datasetsDoc()
	got := doc[i+len(docBegin) : j]
	if bytes.Equal(got, want) {
		return
	}
	if !*updateDoc {
		t.Fatalf("%s: the dataset sections differ from the schemas; run go test ./snapshot/flatfiles -run TestFilesDoc -update-files-doc", docPath)
	}
	out := append(append(append([]byte{}, doc[:i+len(docBegin)]...), want...), doc[j:]...)
	if err := os.WriteFile(docPath, out, 0o644); err != nil {
		t.Fatal(err)
	}
}
