package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pregao/pregao/engine/session"
)

func TestEnvName(t *testing.T) {
	f := func(flag, want string) {
		t.Helper()
		if got := envName(flag); got != want {
			t.Errorf("envName(%q) = %q, want %q", flag, got, want)
		}
	}
	f("addr", "PREGAO_ADDR")
	f("snapshot", "PREGAO_SNAPSHOT")
	f("max-body", "PREGAO_MAX_BODY")
	f("read-header-timeout", "PREGAO_READ_HEADER_TIMEOUT")
}

// envMap is a lookupEnv over a map.
func envMap(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestParseServeEnvironment(t *testing.T) {
	full := map[string]string{
		"PREGAO_SNAPSHOT": "/srv/pregao/demo.snap",
		"PREGAO_KEYS":     "/etc/pregao/keys.json",
		"PREGAO_ADDR":     ":9090",
		"PREGAO_CLOCK":    "wall",
		"PREGAO_PREFIX":   "/api",
		"PREGAO_WATCH":    "30s",
		"PREGAO_MAX_BODY": "4096",
		"PREGAO_LOG":      "json",
		"PREGAO_SCALE":    "10", // not a serve flag: ignored
	}
	want := DefaultServeConfig()
	want.Snapshot, want.Keys, want.Addr, want.Clock = "/srv/pregao/demo.snap", "/etc/pregao/keys.json", ":9090", "wall"
	want.Prefix, want.Watch, want.MaxBodyBytes, want.LogFormat = "/api", 30*time.Second, 4096, "json"

	t.Run("environment only", func(t *testing.T) {
		got, err := parseServe(nil, envMap(full), io.Discard)
		if err != nil || got != want {
			t.Errorf("got %+v, %v\nwant %+v", got, err, want)
		}
	})
	t.Run("flags win", func(t *testing.T) {
		got, err := parseServe([]string{"--addr", "127.0.0.1:0", "--watch=0", "--log", "text", "--snapshot", "x.snap"}, envMap(full), io.Discard)
		w := want
		w.Addr, w.Watch, w.LogFormat, w.Snapshot = "127.0.0.1:0", 0, "text", "x.snap"
		if err != nil || got != w {
			t.Errorf("got %+v, %v\nwant %+v", got, err, w)
		}
	})
	t.Run("no environment", func(t *testing.T) {
		got, err := parseServe([]string{"--keys", "k.json"}, envMap(nil), io.Discard)
		w := DefaultServeConfig()
		w.Keys = "k.json"
		if err != nil || got != w {
			t.Errorf("got %+v, %v\nwant %+v", got, err, w)
		}
	})
	t.Run("empty is unset", func(t *testing.T) {
		got, err := parseServe(nil, envMap(map[string]string{"PREGAO_WATCH": "", "PREGAO_ADDR": ""}), io.Discard)
		if err != nil || got != DefaultServeConfig() {
			t.Errorf("got %+v, %v", got, err)
		}
	})
	t.Run("bad values", func(t *testing.T) {
		for name, value := range map[string]string{
			"PREGAO_WATCH":    "30 seconds",
			"PREGAO_MAX_BODY": "1MiB",
			"PREGAO_CLOCK":    "moon",
			"PREGAO_LOG":      "xml",
		} {
			_, err := parseServe(nil, envMap(map[string]string{name: value, "PREGAO_ADDR": ":1"}), io.Discard)
			if err == nil || !strings.Contains(err.Error(), "environment variable "+name+`="`+value+`"`) {
				t.Errorf("%s=%q: %v", name, value, err)
			}
			// A bad environment value is refused even when the flag is given.
			flagName := strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(name, envPrefix), "_", "-"))
			if _, err := parseServe([]string{"--" + flagName + "=" + defaultFlagValue(flagName)}, envMap(map[string]string{name: value}), io.Discard); err == nil {
				t.Errorf("%s=%q with --%s: accepted", name, value, flagName)
			}
		}
	})
	t.Run("bad flag values", func(t *testing.T) {
		for _, args := range [][]string{{"--clock", "moon"}, {"--log", "xml"}, {"--watch", "x"}, {"extra"}} {
			if _, err := parseServe(args, envMap(nil), io.Discard); err == nil {
				t.Errorf("%v: accepted", args)
			}
		}
	})
}

// defaultFlagValue returns the default of serve's flag name as text.
func defaultFlagValue(name string) string {
	cfg := DefaultServeConfig()
	return serveFlags(&cfg).Lookup(name).DefValue
}

// TestServeEnvironmentNames: every serve flag has its own variable, and
// the help lists them.
func TestServeEnvironmentNames(t *testing.T) {
	cfg := DefaultServeConfig()
	fs := serveFlags(&cfg)
	seen := map[string]string{}
	fs.VisitAll(func(f *flag.Flag) {
		e := envName(f.Name)
		if other, dup := seen[e]; dup {
			t.Errorf("--%s and --%s share %s", f.Name, other, e)
		}
		seen[e] = f.Name
	})
	var out bytes.Buffer
	if _, err := parseServe([]string{"-h"}, envMap(nil), &out); err != flag.ErrHelp {
		t.Fatalf("-h: %v", err)
	}
	for e := range seen {
		if !strings.Contains(out.String(), e) {
			t.Errorf("serve -h does not name %s:\n%s", e, out.String())
		}
	}
}

// TestServeFromEnvironment runs serve configured by the environment alone
// and requests /healthz from it.
func TestServeFromEnvironment(t *testing.T) {
	snap, keys, _ := serveFixture(t)
	t.Setenv("PREGAO_SNAPSHOT", snap)
	t.Setenv("PREGAO_KEYS", keys)
	t.Setenv("PREGAO_ADDR", "127.0.0.1:0")
	t.Setenv("PREGAO_PREFIX", "/api/v9")
	t.Setenv("PREGAO_LOG", "json")
	pr, pw := io.Pipe()
	var logs syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- runServe(ctx, nil, pw, &logs)
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	go io.Copy(io.Discard, pr)
	if err != nil {
		cancel()
		t.Fatalf("no serving line: %v (%v)\n%s", err, <-done, logs.String())
	}
	m := regexp.MustCompile(`serving (\S+) on http://(\S+)/api/v9 \(clock snapshot\)`).FindStringSubmatch(line)
	if m == nil || m[1] != snap {
		cancel()
		t.Fatalf("serving line %q", line)
	}
	if code, body := get(t, "http://"+m[2]+"/healthz", ""); code != 200 || !strings.Contains(body, `"version"`) {
		t.Errorf("healthz %d %s", code, body)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(logs.String(), `{"time":`) {
		t.Errorf("PREGAO_LOG=json ignored: %s", logs.String())
	}
}

// TestOperationsDocConfiguration: the Configuration table of
// docs/operations.md lists every serve flag, its variable and its default,
// and nothing else.
func TestOperationsDocConfiguration(t *testing.T) {
	doc, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "\n## Configuration\n")
	if !ok {
		t.Fatal("docs/operations.md has no ## Configuration section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	row := regexp.MustCompile("(?m)^\\| `--([a-z0-9-]+)` \\| `([A-Z0-9_]+)` \\| ([^|]*) \\|")
	documented := map[string]bool{}
	cfg := DefaultServeConfig()
	fs := serveFlags(&cfg)
	for _, m := range row.FindAllStringSubmatch(section, -1) {
		name, env, def := m[1], m[2], strings.TrimSpace(m[3])
		documented[name] = true
		f := fs.Lookup(name)
		if f == nil {
			t.Errorf("docs/operations.md documents --%s, which serve does not have", name)
			continue
		}
		if env != envName(name) {
			t.Errorf("--%s: documented variable %s, want %s", name, env, envName(name))
		}
		want := "`" + f.DefValue + "`"
		if f.DefValue == "" {
			want = "required"
			if name != "snapshot" && name != "keys" && strings.HasPrefix(def, "none") {
				want = def // optional, with what its absence means
			}
		}
		if def != want {
			t.Errorf("--%s: documented default %q, want %q", name, def, want)
		}
	}
	fs.VisitAll(func(f *flag.Flag) {
		if !documented[f.Name] {
			t.Errorf("docs/operations.md does not document --%s (%s)", f.Name, envName(f.Name))
		}
	})
}

// Every PREGAO_ variable the Kubernetes manifests set is one of serve's,
// with a value its flag accepts.
func TestKubernetesEnvIsServes(t *testing.T) {
	b, err := os.ReadFile("../../deploy/kubernetes/deployment.yaml")
	if err != nil {
		t.Fatal(err)
	}
	pairs := regexp.MustCompile(`(?m)^\s*- name: (PREGAO_[A-Z_]+)[^\n]*\n\s*value: "?([^"\n]*)"?\s*$`).FindAllStringSubmatch(string(b), -1)
	if len(pairs) < 5 {
		t.Fatalf("%d PREGAO_ variables found in deployment.yaml", len(pairs))
	}
	env := map[string]string{}
	for _, p := range pairs {
		env[p[1]] = p[2]
	}
	known := map[string]bool{}
	cfg := DefaultServeConfig()
	serveFlags(&cfg).VisitAll(func(f *flag.Flag) { known[envName(f.Name)] = true })
	for name := range env {
		if !known[name] {
			t.Errorf("deployment.yaml sets %s, which no serve flag reads", name)
		}
	}
	if _, err := parseServe(nil, func(k string) (string, bool) { v, ok := env[k]; return v, ok }, io.Discard); err != nil {
		t.Errorf("serve refuses the manifest's environment: %v", err)
	}
}

// The live overlay's variables: the feed's are pregao feed's flags with
// values they accept, the API replicas' patch adds serve's (the base's
// variables and the patch's together are a serve configuration).
func TestKubernetesLiveEnv(t *testing.T) {
	read := func(file string) map[string]string {
		b, err := os.ReadFile("../../deploy/kubernetes/" + file)
		if err != nil {
			t.Fatal(err)
		}
		env := map[string]string{}
		for _, p := range regexp.MustCompile(`(?m)^\s*- name: (PREGAO_[A-Z0-9_]+)[^\n]*\n\s*value: "?([^"\n]*)"?\s*$`).FindAllStringSubmatch(string(b), -1) {
			env[p[1]] = p[2]
		}
		return env
	}
	feed, patch, base := read("../kubernetes-live/feed.yaml"), read("../kubernetes-live/api-live.yaml"), read("deployment.yaml")
	if feed["PREGAO_LIVE"] == "" || patch["PREGAO_LIVE"] == "" {
		t.Fatalf("no PREGAO_LIVE: feed %v, patch %v", feed, patch)
	}
	cfg := FeedConfig{Live: session.DefaultConfig()}
	fs := feedFlags(&cfg)
	known := map[string]bool{}
	fs.VisitAll(func(f *flag.Flag) { known[envName(f.Name)] = true })
	for name := range feed {
		if !known[name] {
			t.Errorf("feed.yaml sets %s, which no pregao feed flag reads", name)
		}
	}
	if err := setFromEnv(fs, func(k string) (string, bool) { v, ok := feed[k]; return v, ok }); err != nil {
		t.Errorf("pregao feed refuses feed.yaml's environment: %v", err)
	} else if err := cfg.Live.Check("test"); err != nil || cfg.Live.Feed != "b3" || cfg.MetricsAddr != ":8080" {
		t.Errorf("feed.yaml: feed %q, metrics on %q, %v", cfg.Live.Feed, cfg.MetricsAddr, err)
	}
	for k, v := range patch {
		base[k] = v
	}
	scfg, err := parseServe(nil, func(k string) (string, bool) { v, ok := base[k]; return v, ok }, io.Discard)
	if err != nil {
		t.Fatalf("serve refuses the live overlay's environment: %v", err)
	}
	if err := scfg.Live.Check("test"); err != nil {
		t.Errorf("the API replicas' --live: %v", err)
	}
}

// --prefix is taken as the API takes it, so that the banner prints the
// paths served: "v2" and "/v2/" are "/v2", "/" no prefix, "" the default
// (/v2).
func TestParseServePrefix(t *testing.T) {
	for in, want := range map[string]string{"v2": "/v2", "/v2/": "/v2", "api/v3": "/api/v3", "/": "/", "": "/v2"} {
		cfg, err := parseServe([]string{"--prefix", in}, envMap(nil), io.Discard)
		if err != nil || cfg.Prefix != want {
			t.Errorf("--prefix %q: %q, %v; want %q", in, cfg.Prefix, err, want)
		}
		// Printed before a path, never as "//".
		if shown := shownPrefix(cfg.Prefix) + "/indexes"; strings.HasPrefix(shown, "//") || !strings.HasSuffix(shown, strings.TrimSuffix(want, "/")+"/indexes") {
			t.Errorf("--prefix %q printed as %q", in, shown)
		}
	}
}
