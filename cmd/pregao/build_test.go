package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pregao/pregao/snapshot"
	"github.com/pregao/pregao/snapshot/bundle"
	"github.com/pregao/pregao/snapshot/ingest/demo"
)

func tinyBundle(t *testing.T) string {
	t.Helper()
	u := demo.GenerateSize(5, demo.Size{Companies: 2, FIIs: 1, IntradayTickers: 1, IntradaySessions: 1, ReportsFrom: 2025, FundReportsFrom: 2025, EventsFrom: 2025})
	dir := filepath.Join(t.TempDir(), "bundle")
	if err := bundle.Write(dir, u, bundle.WriteOptions{Compression: "none"}); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestBuildAndInspect(t *testing.T) {
	dir := tinyBundle(t)
	out := filepath.Join(t.TempDir(), "demo.snap")
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"build", "--from", dir, "--out", out}, &stdout, &stderr); err != nil {
		t.Fatalf("build: %v\n%s", err, stderr.String())
	}
	for _, want := range []string{"wrote " + out, "PREGAOSN", "format version", "companies", "daily_rows", "sections:", "total"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("build output lacks %q:\n%s", want, stdout.String())
		}
	}

	stdout.Reset()
	if err := run(context.Background(), []string{"inspect", out}, &stdout, &stderr); err != nil {
		t.Fatalf("inspect: %v", err)
	}
	for _, want := range []string{"magic", "PREGAOSN", "id", "build time", "as_of", "source", "report_accounts", "compressed"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("inspect output lacks %q:\n%s", want, stdout.String())
		}
	}

	stdout.Reset()
	if err := run(context.Background(), []string{"inspect", "--json", out}, &stdout, &stderr); err != nil {
		t.Fatalf("inspect --json: %v", err)
	}
	var h struct {
		ID            string         `json:"id"`
		FormatVersion int            `json:"format_version"`
		Counts        map[string]int `json:"counts"`
		Sections      []struct {
			Name string `json:"name"`
			Raw  int64  `json:"raw"`
		} `json:"sections"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &h); err != nil {
		t.Fatalf("inspect --json output: %v\n%s", err, stdout.String())
	}
	if len(h.ID) != 16 || h.FormatVersion != 6 || h.Counts["companies"] == 0 || len(h.Sections) == 0 {
		t.Errorf("inspect --json = %+v", h)
	}
}

func TestBuildBadBundle(t *testing.T) {
	dir := tinyBundle(t)
	os.WriteFile(filepath.Join(dir, "securities.jsonl"), []byte("{\"ticker\": 12}\n"), 0o644)
	os.Remove(filepath.Join(dir, "securities.jsonl.zst"))
	out := filepath.Join(t.TempDir(), "x.snap")
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"build", "--from", dir, "--out", out}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "securities") {
		t.Fatalf("err = %v, want a validation error naming the file", err)
	}
	if _, serr := os.Stat(out); !os.IsNotExist(serr) {
		t.Errorf("a bad bundle produced %s", out)
	}
	// An existing snapshot is left untouched.
	os.WriteFile(out, []byte("old"), 0o644)
	if err := run(context.Background(), []string{"build", "--from", dir, "--out", out}, &stdout, &stderr); err == nil {
		t.Fatal("bad bundle: no error")
	}
	if b, _ := os.ReadFile(out); string(b) != "old" {
		t.Error("a bad bundle replaced the existing snapshot")
	}
	if ents, _ := os.ReadDir(filepath.Dir(out)); len(ents) != 1 {
		t.Errorf("leftover files: %v", ents)
	}
}

func TestBuildInspectUsage(t *testing.T) {
	f := func(args []string, want string) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), args, &stdout, &stderr)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v: err = %v, want %q", args, err, want)
		}
	}
	f([]string{"build"}, "--from and --out are required")
	f([]string{"build", "--from", "x", "--out", "y", "--level", "30"}, "--level")
	f([]string{"build", "--from", "x", "--out", "y", "extra"}, "unexpected argument")
	f([]string{"inspect"}, "exactly one snapshot file")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var stdout, stderr bytes.Buffer
	if err := run(ctx, []string{"build", "--from", "x", "--out", "y"}, &stdout, &stderr); err == nil || !strings.Contains(err.Error(), "canceled") {
		t.Errorf("cancelled build: err = %v", err)
	}
	f([]string{"inspect", filepath.Join(t.TempDir(), "none.snap")}, "no such file")
	bad := filepath.Join(t.TempDir(), "bad.snap")
	os.WriteFile(bad, []byte("PREGAOSN\x09\x00"), 0o644)
	f([]string{"inspect", bad}, "newer than the supported")
}

// TestBuildRequiresManifest: a bundle without manifest.json (an import or
// generate that was stopped, or one written by hand) is refused unless
// --no-manifest says it was written by hand.
func TestBuildRequiresManifest(t *testing.T) {
	dir := tinyBundle(t)
	if err := os.Remove(filepath.Join(dir, bundle.FileManifest)); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "x.snap")
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"build", "--from", dir, "--out", out}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "no manifest.json") {
		t.Fatalf("err = %v, want the missing manifest named", err)
	}
	if _, serr := os.Stat(out); !os.IsNotExist(serr) {
		t.Errorf("a bundle without manifest produced %s", out)
	}
	if err := run(context.Background(), []string{"build", "--no-manifest", "--from", dir, "--out", out}, &stdout, &stderr); err != nil {
		t.Fatalf("--no-manifest: %v", err)
	}
}

// TestBuildRemovesStaleTemp: the temporary file of a build killed midway
// (.NAME.tmp-PID-*, PID no longer running) is removed by the next build.
func TestBuildRemovesStaleTemp(t *testing.T) {
	dir := tinyBundle(t)
	out := filepath.Join(t.TempDir(), "x.snap")
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip(err)
	}
	stale := filepath.Join(filepath.Dir(out), ".x.snap.tmp-"+strconv.Itoa(cmd.Process.Pid)+"-99")
	os.WriteFile(stale, []byte("partial"), 0o644)
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"build", "--from", dir, "--out", out}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale temporary file survives: %v", err)
	}
}

// TestVerify: a section-level corruption passes inspect (it reads only the
// header) and fails verify and inspect --verify; flags may follow the file.
func TestVerify(t *testing.T) {
	dir := tinyBundle(t)
	out := filepath.Join(t.TempDir(), "x.snap")
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"build", "--from", dir, "--out", out}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"verify", out}, {"inspect", out, "--verify"}, {"verify", out, "--json"}, {"inspect", out, "--json"}} {
		stdout.Reset()
		if err := run(context.Background(), args, &stdout, &stderr); err != nil {
			t.Errorf("%v on a good file: %v", args, err)
		}
		if args[len(args)-1] == "--json" && !json.Valid(stdout.Bytes()) {
			t.Errorf("%v: not JSON: %s", args, stdout.String())
		}
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-10] ^= 0xff // inside the last section
	os.WriteFile(out, b, 0o644)
	if err := run(context.Background(), []string{"inspect", out}, &stdout, &stderr); err != nil {
		t.Errorf("inspect reads only the header, yet failed: %v", err)
	}
	for _, args := range [][]string{{"verify", out}, {"inspect", "--verify", out}} {
		err := run(context.Background(), args, &stdout, &stderr)
		if err == nil {
			t.Errorf("%v accepted a corrupt section", args)
		} else if n := strings.Count(err.Error(), out); n != 1 {
			t.Errorf("%v: %v: the file named %d times", args, err, n)
		}
	}
}

func TestParseInterspersed(t *testing.T) {
	f := func(args []string, want string, wantJSON bool) {
		t.Helper()
		fs := flag.NewFlagSet("x", flag.ContinueOnError)
		j := fs.Bool("json", false, "")
		pos, err := parseInterspersed(fs, args)
		if err != nil || strings.Join(pos, ",") != want || *j != wantJSON {
			t.Errorf("%v: %v %v json=%v; want %q json=%v", args, pos, err, *j, want, wantJSON)
		}
	}
	f([]string{"a"}, "a", false)
	f([]string{"a", "--json"}, "a", true)
	f([]string{"--json", "a", "b"}, "a,b", true)
	f([]string{"a", "--", "--json"}, "a,--json", false)
	f(nil, "", false)
}

// pregao build --out a symbolic link (a snapshot a server watches through
// a link) replaces the file the link names, in its folder, and leaves
// the link a link.
func TestBuildThroughSymlink(t *testing.T) {
	dir := tinyBundle(t)
	root := t.TempDir()
	target := filepath.Join(root, "snapshots", "demo.snap")
	os.MkdirAll(filepath.Dir(target), 0o755)
	os.WriteFile(target, []byte("the previous snapshot"), 0o644)
	link := filepath.Join(root, "current.snap")
	os.Symlink("snapshots/demo.snap", link)
	var so, se bytes.Buffer
	if err := runBuild(context.Background(), []string{"--from", dir, "--out", link}, &so, &se); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("%s is no longer a symbolic link (%v)", link, err)
	}
	if _, _, err := snapshot.Load(target, snapshot.LoadOptions{}); err != nil {
		t.Errorf("the link's target: %v", err)
	}
	if ents, _ := os.ReadDir(root); len(ents) != 2 {
		t.Errorf("the link's folder holds %d entries, want the link and snapshots/", len(ents))
	}
}

// A build's memory limit is its budget until the live heap nears it,
// then the live heap plus an eighth (at least 512 MiB), never above the
// ceiling (half the machine's memory) when there is one.
func TestHeapLimit(t *testing.T) {
	const gib = int64(1) << 30
	for _, c := range []struct {
		live, ceil, want int64
	}{
		{0, 0, buildHeapBudget},
		{1 * gib, 0, buildHeapBudget},
		{2 * gib, 0, buildHeapBudget},
		{3 * gib, 0, buildHeapBudget},
		{3*gib + 512<<20, 0, 4 * gib},
		{8 * gib, 0, 9 * gib},
		{8 * gib, 9*gib - 1, 9*gib - 1},
		{12 * gib, 12 * gib, 12 * gib},
		{1 * gib, 2 * gib, 2 * gib},
	} {
		if got := heapLimit(c.live, c.ceil); got != c.want {
			t.Errorf("heapLimit(%d, %d) = %d, want %d", c.live, c.ceil, got, c.want)
		}
	}
}
