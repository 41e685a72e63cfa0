package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pregao/pregao/httpapi"
)

// keys add --admin makes a key with the admin scope and no plan (unless
// --plan says one), and keys list shows plans and scopes.
func TestKeysAdmin(t *testing.T) {
	file := filepath.Join(t.TempDir(), "keys.json")
	run := func(args ...string) (string, string, error) {
		var out, errs bytes.Buffer
		err := runKeys(context.Background(), args, &out, &errs)
		return out.String(), errs.String(), err
	}
	feed, msg, err := run("add", "--file", file, "--name", "feed", "--admin")
	if err != nil || !strings.Contains(msg, "admin scope, no plan") {
		t.Fatalf("add --admin: %v %q", err, msg)
	}
	if _, msg, err = run("add", "--file", file, "--name", "both", "--admin", "--plan", "eod"); err != nil || !strings.Contains(msg, "plan eod and the admin scope") {
		t.Fatalf("add --admin --plan eod: %v %q", err, msg)
	}
	if _, _, err := run("add", "--file", file, "--name", "reader"); err != nil {
		t.Fatal(err)
	}
	keys, err := httpapi.LoadKeys(file)
	if err != nil {
		t.Fatal(err)
	}
	if e, ok := keys.Lookup(strings.TrimSpace(feed)); !ok || e.Plan != "" || !e.Admin() {
		t.Errorf("feed key: %+v %v", e, ok)
	}
	list, _, err := run("list", "--file", file)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"feed": {"-", "admin"}, "both": {"eod", "admin"}, "reader": {"delayed", "-"}}
	lines := strings.Split(strings.TrimSpace(list), "\n")
	if f := strings.Fields(lines[0]); len(f) < 3 || f[1] != "PLAN" || f[2] != "SCOPES" {
		t.Errorf("list header %q", lines[0])
	}
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		if w := want[f[0]]; len(f) < 3 || w == nil || f[1] != w[0] || f[2] != w[1] {
			t.Errorf("list row %q, want plan and scopes %q", l, w)
		}
		delete(want, f[0])
	}
	if len(want) > 0 {
		t.Errorf("list lacks %v:\n%s", want, list)
	}
}
