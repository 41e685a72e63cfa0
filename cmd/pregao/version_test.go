package main

import (
	"bytes"
	"context"
	"debug/buildinfo"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestReadBuild(t *testing.T) {
	vcs := []debug.BuildSetting{
		{Key: "-trimpath", Value: "true"},
		{Key: "vcs.revision", Value: "ddf5ca1f00"},
		{Key: "vcs.time", Value: "2026-11-24T18:01:00Z"},
		{Key: "vcs.modified", Value: "true"},
	}
	main := func(v string, settings []debug.BuildSetting) *debug.BuildInfo {
		return &debug.BuildInfo{GoVersion: "go1.99.1", Main: debug.Module{Path: module, Version: v}, Settings: settings}
	}
	for _, tc := range []struct {
		name           string
		stamped, stRev string
		bi             *debug.BuildInfo
		want           buildInfo
	}{
		{"stamped wins", "v1.2.3-4-gddf5ca1-dirty", "", main("v1.2.3", vcs),
			buildInfo{Version: "v1.2.3-4-gddf5ca1-dirty", Module: module, ModuleVersion: "v1.2.3", Revision: "ddf5ca1f00", Time: "2026-11-24T18:01:00Z", Modified: "true", GoVersion: "go1.99.1"}},
		{"module version", "", "", main("v1.2.3", nil),
			buildInfo{Version: "v1.2.3", Module: module, ModuleVersion: "v1.2.3", GoVersion: "go1.99.1"}},
		{"pseudo-version past a tag", "", "", main("v0.1.1-0.20261124180100-ddf5ca1f0000+dirty", vcs),
			buildInfo{Version: "v0.1.1-0.20261124180100-ddf5ca1f0000+dirty", Module: module, ModuleVersion: "v0.1.1-0.20261124180100-ddf5ca1f0000+dirty", Revision: "ddf5ca1f00", Time: "2026-11-24T18:01:00Z", Modified: "true", GoVersion: "go1.99.1"}},
		{"pseudo-version without a tag: the tree's release", "", "", main("v0.0.0-20261124180100-ddf5ca1f0000+dirty", vcs),
			buildInfo{Version: release + "+ddf5ca1f00.dirty", Module: module, ModuleVersion: "v0.0.0-20261124180100-ddf5ca1f0000+dirty", Revision: "ddf5ca1f00", Time: "2026-11-24T18:01:00Z", Modified: "true", GoVersion: "go1.99.1"}},
		{"devel build", "", "", main("(devel)", []debug.BuildSetting{{Key: "vcs.modified", Value: "false"}}),
			buildInfo{Version: release + "+devel", Module: module, ModuleVersion: "(devel)", Modified: "false", GoVersion: "go1.99.1"}},
		{"devel build with a revision", "", "", main("(devel)", []debug.BuildSetting{{Key: "vcs.revision", Value: "4f16615c3488aa00bb"}}),
			buildInfo{Version: release + "+4f16615c3488", Module: module, ModuleVersion: "(devel)", Revision: "4f16615c3488aa00bb", GoVersion: "go1.99.1"}},
		{"recorded revision wins", "v1.2.3", "0123abcd", main("(devel)", vcs),
			buildInfo{Version: "v1.2.3", Module: module, ModuleVersion: "(devel)", Revision: "ddf5ca1f00", Time: "2026-11-24T18:01:00Z", Modified: "true", GoVersion: "go1.99.1"}},
		{"stamped revision", "v1.2.3", "0123abcd", main("(devel)", nil),
			buildInfo{Version: "v1.2.3", Module: module, ModuleVersion: "(devel)", Revision: "0123abcd", GoVersion: "go1.99.1"}},
		{"no build info", "", "", nil, buildInfo{Version: release + "+devel", GoVersion: runtime.Version()}},
		{"no build info, stamped", "v2.0.0", "0123abcd", nil, buildInfo{Version: "v2.0.0", Revision: "0123abcd", GoVersion: runtime.Version()}},
		{"stamped bare commit", "ddf5ca1-dirty", "", nil, buildInfo{Version: release + "+ddf5ca1-dirty", GoVersion: runtime.Version()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.want.Platform = runtime.GOOS + "/" + runtime.GOARCH
			if got := readBuild(tc.stamped, tc.stRev, tc.bi); got != tc.want {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestWriteVersion(t *testing.T) {
	var b bytes.Buffer
	writeVersion(&b, buildInfo{Version: "v1.2.3", Module: module, ModuleVersion: "(devel)", Revision: "abc", GoVersion: "go1.99.1", Platform: "linux/arm64"})
	want := "pregao v1.2.3\n" +
		"  module:    github.com/pregao/pregao (devel)\n" +
		"  revision:  abc\n" +
		"  time:      unknown\n" +
		"  modified:  unknown\n" +
		"  go:        go1.99.1 linux/arm64\n" +
		"  snapshots: writes format 6, reads 4 to 6\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

func TestVersionCommand(t *testing.T) {
	want := currentBuild().Version
	for _, args := range [][]string{{"version"}, {"--version"}, {"-version"}} {
		var out, errb bytes.Buffer
		if err := run(context.Background(), args, &out, &errb); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		if !strings.HasPrefix(out.String(), "pregao "+want+"\n") || !strings.Contains(out.String(), "  go:        "+runtime.Version()) {
			t.Errorf("%v:\n%s", args, out.String())
		}
	}
	var out, errb bytes.Buffer
	if err := run(context.Background(), []string{"version", "-short"}, &out, &errb); err != nil || out.String() != want+"\n" {
		t.Errorf("version -short: %q %v", out.String(), err)
	}
	if err := run(context.Background(), []string{"version", "extra"}, &out, &errb); err == nil {
		t.Error("version extra: accepted")
	}
}

// syncBuffer is a bytes.Buffer safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b.Reset()
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestServeReportsVersion: the startup log line, /healthz, the document
// /docs renders and the pregao_build_info gauge carry the version.
func TestServeReportsVersion(t *testing.T) {
	snap, keys, _ := serveFixture(t)
	cfg := DefaultServeConfig()
	cfg.Snapshot, cfg.Keys, cfg.Addr = snap, keys, "127.0.0.1:0"
	var logs syncBuffer
	m, err := NewMain(cfg, &logs)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Open(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	defer func() {
		cancel()
		select {
		case <-done:
		case <-time.After(waitBound):
			t.Error("no shutdown")
		}
	}()
	b := currentBuild()
	base := "http://" + m.Addr()
	if !strings.Contains(logs.String(), `msg="pregao starting" version=`+b.Version) {
		t.Errorf("startup log:\n%s", logs.String())
	}
	if code, body := get(t, base+"/healthz", ""); code != 200 || body != `{"status":"ok","version":"`+b.Version+`"}` {
		t.Errorf("healthz %d %s", code, body)
	}
	if _, doc := get(t, base+"/openapi.json", ""); !strings.Contains(doc, `"version": "`+b.Version+`"`) {
		t.Errorf("/openapi.json (the /docs page's) does not name version %s", b.Version)
	}
	_, metrics := get(t, base+"/metrics", "")
	want := `pregao_build_info{goversion="` + b.GoVersion + `",revision="` + b.Revision + `",version="` + b.Version + `"} 1`
	if !strings.Contains(metrics, want) {
		t.Errorf("metrics lack %s", want)
	}
}

// buildPregao builds this command with the given environment and flags
// into a temporary directory and returns the binary's path. It skips
// when no go tool is on PATH (go test puts its own there).
func buildPregao(tb testing.TB, env []string, flags ...string) string {
	tb.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		tb.Skip("no go tool on PATH")
	}
	bin := filepath.Join(tb.TempDir(), "pregao")
	args := append([]string{"build", "-o", bin}, flags...)
	cmd := exec.Command(gobin, append(args, ".")...)
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return bin
}

// TestStaticStampedBuild builds the binary the way `make dist` and the
// Dockerfile do (CGO_ENABLED=0, version stamped by -ldflags; without
// -trimpath, which would rebuild every package cold)
// and checks that it is statically linked (no program interpreter, no
// shared library needed) and reports the stamped version.
func TestStaticStampedBuild(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("ELF check: linux only")
	}
	const stamped, rev = "v9.9.9-test", "0123456789abcdef0123456789abcdef01234567"
	bin := buildPregao(t, []string{"CGO_ENABLED=0"}, "-ldflags", "-X main.version="+stamped+" -X main.revision="+rev)

	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("the binary has a program interpreter (PT_INTERP): dynamically linked")
		}
		if p.Type == elf.PT_DYNAMIC {
			t.Error("the binary has a dynamic section (PT_DYNAMIC)")
		}
	}
	if libs, err := f.ImportedLibraries(); err != nil || len(libs) > 0 {
		t.Errorf("DT_NEEDED libraries %v (%v)", libs, err)
	}

	bi, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	if settings["CGO_ENABLED"] != "0" {
		t.Errorf("build settings %v", settings)
	}

	out, err := exec.Command(bin, "version", "-short").Output()
	if err != nil || string(out) != stamped+"\n" {
		t.Errorf("version -short: %q %v", out, err)
	}
	out, err = exec.Command(bin, "--version").Output()
	if err != nil || !strings.HasPrefix(string(out), "pregao "+stamped+"\n") || !strings.Contains(string(out), "  revision:  ") {
		t.Errorf("--version: %s %v", out, err)
	}
	if got := settings["vcs.revision"]; got == "" && !strings.Contains(string(out), "  revision:  "+rev+"\n") {
		t.Errorf("--version without the stamped revision: %s", out)
	}
}

// pregao version prints a semantic version whatever was stamped: one
// that is not names the tree's release.
func TestSemanticVersion(t *testing.T) {
	for in, want := range map[string]string{
		"":                        "",
		"v0.1.0":                  "v0.1.0",
		"v0.1.0-3-gddf5ca1":       "v0.1.0-3-gddf5ca1",
		"v0.1.0-3-gddf5ca1-dirty": "v0.1.0-3-gddf5ca1-dirty",
		"v1.0.0-rc.1+build.5":     "v1.0.0-rc.1+build.5",
		"ddf5ca1":                 release + "+ddf5ca1",
		"ddf5ca1-dirty":           release + "+ddf5ca1-dirty",
		"v0.1":                    release + "+0.1",
		"release/2026 11":         release + "+release-2026-11",
	} {
		got := semanticVersion(in)
		if got != want {
			t.Errorf("semanticVersion(%q) = %q, want %q", in, got, want)
		}
		if got != "" && !semverRE.MatchString(got) {
			t.Errorf("semanticVersion(%q) = %q: not a semantic version", in, got)
		}
	}
}
