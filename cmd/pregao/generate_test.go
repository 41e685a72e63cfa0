package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRunGenerateFlags(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no out", []string{"--seed", "1"}, "--out or --official is required"},
		{"out and official", []string{"--out", t.TempDir(), "--official", t.TempDir()}, "not both"},
		{"bad compression", []string{"--out", t.TempDir(), "--compression", "lz4"}, "unknown --compression"},
		{"bad scale", []string{"--out", t.TempDir(), "--scale", "0"}, "--scale must be"},
		{"extra argument", []string{"--out", t.TempDir(), "extra"}, "unexpected argument"},
		{"bad flag", []string{"--nope"}, "flag provided but not defined"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			err := runGenerate(context.Background(), tc.args, &out, &errb)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestRunGenerateCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errb bytes.Buffer
	if err := runGenerate(ctx, []string{"--out", t.TempDir()}, &out, &errb); err == nil {
		t.Fatal("want an error for a cancelled context")
	}
}

// pregao generate --out and pregao update --bundle refuse a folder that
// holds files of the user's, naming them, before any work, and leave it
// as it was.
func TestGenerateRefusesForeignFolder(t *testing.T) {
	out := t.TempDir()
	os.WriteFile(filepath.Join(out, "thesis.tex"), []byte("mine"), 0o644)
	var so, se bytes.Buffer
	err := runGenerate(context.Background(), []string{"--out", out}, &so, &se)
	if err == nil || !strings.Contains(err.Error(), `"thesis.tex"`) || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("generate into a folder of the user's: %v", err)
	}
	err = runUpdate(context.Background(), []string{"--no-fetch", "--dir", t.TempDir(), "--out", filepath.Join(t.TempDir(), "x.snap"), "--bundle", out}, &so, &se)
	if err == nil || !strings.Contains(err.Error(), `--bundle: bundle: `+out) || !strings.Contains(err.Error(), `"thesis.tex"`) {
		t.Fatalf("update --bundle a folder of the user's: %v", err)
	}
	if ents, _ := os.ReadDir(out); len(ents) != 1 {
		t.Errorf("the folder holds %d entries, want thesis.tex alone", len(ents))
	}
}

// TestCommandsStopOnContext: every long command given an ended context
// (a signal before it started) says it was interrupted and writes
// nothing.
func TestCommandsStopOnContext(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("test signal"))
	bundleDir := tinyBundle(t)
	work := t.TempDir()
	for _, args := range [][]string{
		{"generate", "--out", filepath.Join(work, "gen")},
		{"generate", "--official", filepath.Join(work, "off")},
		{"build", "--from", bundleDir, "--out", filepath.Join(work, "x.snap")},
		{"import", "--out", filepath.Join(work, "imp"), "--as-of", "2021-03-26"},
		{"verify", filepath.Join(work, "x.snap")},
		{"inspect", filepath.Join(work, "x.snap")},
		{"fetch", "--from", "2022-02-03", "--dir", filepath.Join(work, "dl"), "--base-url", "http://127.0.0.1:1"},
		{"update", "--dir", filepath.Join(work, "dl"), "--out", filepath.Join(work, "u.snap"), "--to", "2022-02-03", "--base-url", "http://127.0.0.1:1"},
	} {
		var so, se bytes.Buffer
		err := run(ctx, args, &so, &se)
		if err == nil || !strings.HasPrefix(err.Error(), args[0]+": ") || !strings.Contains(err.Error(), "interrupted (test signal)") {
			t.Errorf("%v: %v, want %s: ... interrupted (test signal)", args, err, args[0])
		}
	}
	if ents, _ := os.ReadDir(work); len(ents) > 1 { // fetch may make its folder
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("interrupted commands wrote %v", names)
	}
}
