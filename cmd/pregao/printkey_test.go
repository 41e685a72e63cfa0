package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// serve --print-key FILE (the demo image's PREGAO_PRINT_KEY) prints the
// key of keys add's output with a request to try; anything else in the
// file is refused, so a mistaken path never prints a secret of another
// kind.
func TestPrintKey(t *testing.T) {
	dir := t.TempDir()
	key := filepath.Join(dir, "demo.key")
	os.WriteFile(key, []byte("pg_0123456789abcdef0123456789abcdef\n"), 0o600)
	var out bytes.Buffer
	if err := printKey(&out, key, "[::]:8080", "/v2"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"API key: pg_0123456789abcdef0123456789abcdef\n", "Bearer pg_0123456789abcdef0123456789abcdef", "http://127.0.0.1:8080/v2/indexes/IBOV/highs?limit=5", "http://127.0.0.1:8080/docs"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("printed %q, want %q in it", out.String(), want)
		}
	}
	other := filepath.Join(dir, "keys.json")
	os.WriteFile(other, []byte(`{"keys":[]}`), 0o600)
	if err := printKey(&out, other, ":8080", "/v2"); err == nil || !strings.Contains(err.Error(), "not an API key") {
		t.Errorf("a keys file: %v", err)
	}
	if err := printKey(&out, filepath.Join(dir, "absent"), ":8080", "/v2"); err == nil {
		t.Error("an absent file: no error")
	}
}
