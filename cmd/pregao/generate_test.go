package main

import (
	"bytes"
	"context"
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
