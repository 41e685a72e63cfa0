package main

import (
	"fmt"
	"io"
	"os"

	"github.com/pregao/pregao/snapshot/ingest/assemble"
)

// progressTo returns an assemble.Progress that rewrites the current line
// of the terminal w.
func progressTo(w io.Writer) assemble.Progress {
	return func(line string) { fmt.Fprint(w, "\r\033[K"+line) }
}

// isTerminal reports whether w is a character device (an interactive
// terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
