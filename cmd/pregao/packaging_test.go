package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// No Docker engine or systemd runs in the tests: the Dockerfile and the
// unit are checked by reading them. The static build itself is checked by
// TestStaticStampedBuild.

// dockerInstr is one Dockerfile instruction: its keyword (upper case), its
// arguments (continuation lines joined) and its line number.
type dockerInstr struct {
	cmd, args string
	line      int
}

// dockerStage is one FROM and the instructions under it.
type dockerStage struct {
	name, base string // name from "AS name" (lower case); base image or stage
	platform   string // FROM --platform=, "" without
	instrs     []dockerInstr
}

// parseDockerfile splits a Dockerfile into stages: comments and blank
// lines dropped, lines ending in '\' joined with the next.
func parseDockerfile(tb testing.TB, text string) (args map[string]string, stages []*dockerStage) {
	tb.Helper()
	args = map[string]string{} // ARGs before the first FROM: name -> default
	var cur strings.Builder
	start := 0
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if cur.Len() == 0 && (t == "" || strings.HasPrefix(t, "#")) {
			continue
		}
		if cur.Len() > 0 && strings.HasPrefix(t, "#") {
			continue // a comment inside a continued instruction
		}
		if cur.Len() == 0 {
			start = i + 1
		}
		if s, ok := strings.CutSuffix(t, `\`); ok {
			cur.WriteString(s + " ")
			continue
		}
		cur.WriteString(t)
		full := cur.String()
		cur.Reset()
		cmd, rest, _ := strings.Cut(full, " ")
		in := dockerInstr{cmd: strings.ToUpper(cmd), args: strings.TrimSpace(rest), line: start}
		switch {
		case in.cmd == "FROM":
			f := strings.Fields(in.args)
			var platform string
			if len(f) > 0 && strings.HasPrefix(f[0], "--platform=") {
				platform, f = strings.TrimPrefix(f[0], "--platform="), f[1:]
			}
			st := &dockerStage{base: f[0], platform: platform}
			if len(f) == 3 && strings.EqualFold(f[1], "AS") {
				st.name = strings.ToLower(f[2])
			} else if len(f) != 1 {
				tb.Fatalf("Dockerfile:%d: FROM %s: want IMAGE [AS NAME]", in.line, in.args)
			}
			stages = append(stages, st)
		case len(stages) == 0:
			if in.cmd != "ARG" {
				tb.Fatalf("Dockerfile:%d: %s before the first FROM", in.line, in.cmd)
			}
			name, def, _ := strings.Cut(in.args, "=")
			args[name] = strings.Trim(def, `"`)
		default:
			stages[len(stages)-1].instrs = append(stages[len(stages)-1].instrs, in)
		}
	}
	if cur.Len() > 0 {
		tb.Fatal("Dockerfile ends in a continuation")
	}
	return args, stages
}

// chain returns the stage named name and the stages it derives from, the
// stage itself first.
func chain(stages []*dockerStage, st *dockerStage) []*dockerStage {
	out := []*dockerStage{st}
	for {
		i := slices.IndexFunc(stages, func(s *dockerStage) bool { return s.name != "" && s.name == strings.ToLower(st.base) })
		if i < 0 {
			return out
		}
		st = stages[i]
		out = append(out, st)
	}
}

// envOf returns the ENV assignments of the stages (later stages of the
// chain first, so the nearest assignment wins).
func envOf(tb testing.TB, ch []*dockerStage) map[string]string {
	tb.Helper()
	env := map[string]string{}
	for i := len(ch) - 1; i >= 0; i-- {
		for _, in := range ch[i].instrs {
			if in.cmd != "ENV" {
				continue
			}
			for _, kv := range strings.Fields(in.args) {
				k, v, ok := strings.Cut(kv, "=")
				if !ok {
					tb.Errorf("Dockerfile:%d: ENV %s: want KEY=VALUE", in.line, in.args)
				}
				env[k] = strings.Trim(v, `"`)
			}
		}
	}
	return env
}

// last returns the last instruction cmd of the chain (nearest stage first).
func last(ch []*dockerStage, cmd string) (dockerInstr, bool) {
	for _, st := range ch {
		for i := len(st.instrs) - 1; i >= 0; i-- {
			if st.instrs[i].cmd == cmd {
				return st.instrs[i], true
			}
		}
	}
	return dockerInstr{}, false
}

// serveFlagEnv returns the environment variables of serve's flags.
func serveFlagEnv() map[string]bool {
	cfg := DefaultServeConfig()
	vars := map[string]bool{}
	serveFlags(&cfg).VisitAll(func(f *flag.Flag) { vars[envName(f.Name)] = true })
	return vars
}

func TestDockerfile(t *testing.T) {
	b, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	args, stages := parseDockerfile(t, string(b))
	byName := map[string]*dockerStage{}
	for _, st := range stages {
		if st.name != "" {
			byName[st.name] = st
		}
	}
	for _, name := range []string{"build", "demo", "runtime"} {
		if byName[name] == nil {
			t.Fatalf("no stage %q (stages: %v)", name, byName)
		}
	}

	// The builder's Go is the release toolchain (RELEASE_GO of the
	// Makefile, the one make dist builds with and make vulncheck checks
	// the standard library as), at least the go.mod's.
	gomod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	makefile, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	gover := regexp.MustCompile(`(?m)^go (\S+)$`).FindSubmatch(gomod)
	release := regexp.MustCompile(`(?m)^RELEASE_GO\s*\?=\s*go(\S+)$`).FindSubmatch(makefile)
	if gover == nil || release == nil || args["GO_VERSION"] != string(release[1]) {
		t.Errorf("ARG GO_VERSION=%q, the Makefile's RELEASE_GO %q", args["GO_VERSION"], release)
	}
	if gover != nil && release != nil && !versionAtLeast(string(release[1]), string(gover[1])) {
		t.Errorf("RELEASE_GO go%s is older than go.mod's go %s", release[1], gover[1])
	}
	if !strings.HasPrefix(byName["build"].base, "golang:${GO_VERSION}") {
		t.Errorf("build stage FROM %s: want golang:${GO_VERSION}...", byName["build"].base)
	}
	// The build stage runs on the builder's platform and cross-compiles
	// (GOOS/GOARCH from TARGETOS/TARGETARCH); the demo data is made by a
	// binary of the builder's platform, which can run there.
	if byName["build"].platform != "$BUILDPLATFORM" {
		t.Errorf("build stage FROM --platform=%q: want $BUILDPLATFORM", byName["build"].platform)
	}
	for _, in := range byName["demo-data"].instrs {
		if in.cmd == "RUN" && strings.Contains(in.args, "/out/pregao ") {
			t.Errorf("Dockerfile:%d: the demo data is made by the target's binary, which may not run on the builder", in.line)
		}
	}
	// Base images: a digest ARG each, "" or "@sha256:<64 hex>" (make docker-pin).
	for _, st := range stages {
		if chainable := slices.ContainsFunc(stages, func(s *dockerStage) bool { return s.name == strings.ToLower(st.base) }); chainable {
			continue
		}
		m := regexp.MustCompile(`\$\{(\w+_DIGEST)\}$`).FindStringSubmatch(st.base)
		if m == nil {
			t.Errorf("FROM %s: want the image followed by a digest ARG (${..._DIGEST})", st.base)
			continue
		}
		if d, ok := args[m[1]]; !ok || d != `""` && d != "" && !regexp.MustCompile(`^"?@sha256:[0-9a-f]{64}"?$`).MatchString(d) {
			t.Errorf("ARG %s=%s: want \"\" or \"@sha256:<digest>\"", m[1], d)
		}
	}

	// The binary is built static, trimmed and stamped.
	buildEnv := envOf(t, chain(stages, byName["build"]))
	built := false
	for _, in := range byName["build"].instrs {
		if in.cmd != "RUN" || !strings.Contains(in.args, "go build") {
			continue
		}
		built = true
		if buildEnv["CGO_ENABLED"] != "0" && !strings.Contains(in.args, "CGO_ENABLED=0") {
			t.Errorf("Dockerfile:%d: go build without CGO_ENABLED=0", in.line)
		}
		for _, want := range []string{"-trimpath", "-X main.version=${VERSION}", "-X main.revision=${REVISION}", "./cmd/pregao"} {
			if !strings.Contains(in.args, want) {
				t.Errorf("Dockerfile:%d: go build lacks %s", in.line, want)
			}
		}
	}
	if !built {
		t.Error("the build stage runs no go build")
	}

	// COPY --from names an earlier stage.
	for i, st := range stages {
		for _, in := range st.instrs {
			if m := regexp.MustCompile(`--from=(\S+)`).FindStringSubmatch(in.args); in.cmd == "COPY" && m != nil {
				j := slices.IndexFunc(stages, func(s *dockerStage) bool { return s.name == m[1] })
				if j < 0 || j >= i {
					t.Errorf("Dockerfile:%d: COPY --from=%s names no earlier stage", in.line, m[1])
				}
			}
		}
	}

	vars := serveFlagEnv()
	for _, target := range []*dockerStage{stages[len(stages)-1], byName["demo"]} {
		ch := chain(stages, target)
		t.Run("target "+target.name, func(t *testing.T) {
			base := ch[len(ch)-1].base
			if !strings.HasPrefix(base, "gcr.io/distroless/static") && base != "scratch" {
				t.Errorf("final image on %s: want distroless static or scratch", base)
			}
			// No shell in the image: only exec-form RUN could work.
			for _, st := range ch {
				for _, in := range st.instrs {
					if in.cmd == "RUN" && !strings.HasPrefix(in.args, "[") {
						t.Errorf("Dockerfile:%d: shell-form RUN in a stage without a shell", in.line)
					}
				}
			}
			user, ok := last(ch, "USER")
			if !ok {
				t.Error("no USER: the image would run as root")
			} else if u, _, _ := strings.Cut(user.args, ":"); u == "" || u == "0" || u == "root" {
				t.Errorf("Dockerfile:%d: USER %s is root", user.line, user.args)
			}
			ep, ok := last(ch, "ENTRYPOINT")
			var argv []string
			if !ok || json.Unmarshal([]byte(ep.args), &argv) != nil {
				t.Fatalf("ENTRYPOINT %q: want the exec form [\"...\", ...]", ep.args)
			}
			if len(argv) < 2 || path.Base(argv[0]) != "pregao" || argv[1] != "serve" {
				t.Errorf("ENTRYPOINT %v: want pregao serve", argv)
			}
			env := envOf(t, ch)
			for k := range env {
				if strings.HasPrefix(k, envPrefix) && !vars[k] {
					t.Errorf("ENV %s names no serve flag", k)
				}
			}
			hc, ok := last(ch, "HEALTHCHECK")
			var hcArgv []string
			if _, cmd, _ := strings.Cut(hc.args, "CMD "); !ok || json.Unmarshal([]byte(cmd), &hcArgv) != nil || len(hcArgv) < 2 || path.Base(hcArgv[0]) != "pregao" || hcArgv[1] != "healthcheck" {
				t.Errorf("HEALTHCHECK %q: want CMD [\".../pregao\", \"healthcheck\", ...] (no shell in the image)", hc.args)
			}
			labels := map[string]bool{}
			for _, st := range ch {
				for _, in := range st.instrs {
					if in.cmd == "LABEL" {
						for _, m := range regexp.MustCompile(`(org\.opencontainers\.image\.[a-z]+)=`).FindAllStringSubmatch(in.args, -1) {
							labels[m[1]] = true
						}
					}
				}
			}
			for _, l := range []string{"title", "description", "source", "licenses", "version", "revision", "created"} {
				if !labels["org.opencontainers.image."+l] {
					t.Errorf("no LABEL org.opencontainers.image.%s", l)
				}
			}
			expose, ok := last(ch, "EXPOSE")
			var ports []string
			if ok {
				for _, p := range strings.Fields(expose.args) {
					ports = append(ports, strings.TrimSuffix(p, "/tcp"))
				}
			}
			_, port, _ := strings.Cut(env["PREGAO_ADDR"], ":")
			_, mport, _ := strings.Cut(env["PREGAO_METRICS_ADDR"], ":")
			if !slices.Equal(ports, []string{port, mport}) || strings.HasPrefix(env["PREGAO_ADDR"], "127.") || strings.HasPrefix(env["PREGAO_METRICS_ADDR"], "127.") {
				t.Errorf("EXPOSE %q, PREGAO_ADDR=%q, PREGAO_METRICS_ADDR=%q: want both ports exposed, on every interface", expose.args, env["PREGAO_ADDR"], env["PREGAO_METRICS_ADDR"])
			}
			// /metrics lists the keys' names and their use: never on the
			// port published for clients.
			if mport == "" || mport == port {
				t.Errorf("PREGAO_METRICS_ADDR=%q: want /metrics on a port apart from the API's %q", env["PREGAO_METRICS_ADDR"], port)
			}
		})
	}
	demoEnv := envOf(t, chain(stages, byName["demo"]))
	for _, k := range []string{"PREGAO_SNAPSHOT", "PREGAO_KEYS", "PREGAO_PRINT_KEY"} {
		if !strings.HasPrefix(demoEnv[k], "/var/lib/pregao/") {
			t.Errorf("demo: %s=%q, want a file copied to /var/lib/pregao", k, demoEnv[k])
		}
	}
}

func TestDockerignore(t *testing.T) {
	b, err := os.ReadFile("../../.dockerignore")
	if err != nil {
		t.Fatal(err)
	}
	var patterns []string
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			patterns = append(patterns, strings.TrimPrefix(l, "/"))
		}
	}
	ignored := func(p string) bool {
		for _, pat := range patterns {
			if ok, _ := path.Match(pat, p); ok {
				return true
			}
			if rest, ok := strings.CutPrefix(pat, "**/"); ok {
				if ok, _ := path.Match(rest, path.Base(p)); ok {
					return true
				}
			}
		}
		return false
	}
	for _, p := range []string{".git", ".cache", "bin", "dist"} {
		if !ignored(p) {
			t.Errorf(".dockerignore does not leave out %s", p)
		}
	}
	// Everything the build needs is sent.
	for _, p := range []string{"go.mod", "go.sum", "cmd", "httpapi", "engine", "index", "snapshot"} {
		if ignored(p) {
			t.Errorf(".dockerignore leaves out %s, which the build needs", p)
		}
	}
}

// parseUnit reads a systemd unit: section -> key -> values in order (a
// key may repeat).
func parseUnit(tb testing.TB, text string) map[string]map[string][]string {
	tb.Helper()
	out := map[string]map[string][]string{}
	var sec string
	for i, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		switch {
		case l == "" || strings.HasPrefix(l, "#") || strings.HasPrefix(l, ";"):
		case strings.HasPrefix(l, "[") && strings.HasSuffix(l, "]"):
			sec = l[1 : len(l)-1]
			out[sec] = map[string][]string{}
		default:
			k, v, ok := strings.Cut(l, "=")
			if !ok || sec == "" {
				tb.Fatalf("pregao.service:%d: %q is not KEY=VALUE in a section", i+1, l)
			}
			out[sec][k] = append(out[sec][k], v)
		}
	}
	return out
}

func TestSystemdUnit(t *testing.T) {
	b, err := os.ReadFile("../../packaging/pregao.service")
	if err != nil {
		t.Fatal(err)
	}
	u := parseUnit(t, string(b))
	svc := u["Service"]
	one := func(key string) string {
		if v := svc[key]; len(v) > 0 {
			return v[len(v)-1]
		}
		return "(unset)"
	}
	for key, want := range map[string]string{
		"ExecReload":              "/bin/kill -HUP $MAINPID",
		"NoNewPrivileges":         "yes",
		"ProtectSystem":           "strict",
		"ProtectHome":             "yes",
		"PrivateTmp":              "yes",
		"CapabilityBoundingSet":   "",
		"MemoryDenyWriteExecute":  "yes",
		"RestrictAddressFamilies": "AF_INET AF_INET6 AF_UNIX",
	} {
		if got := one(key); got != want {
			t.Errorf("[Service] %s=%s, want %q", key, got, want)
		}
	}
	if !strings.HasSuffix(one("ExecStart"), "/pregao serve") {
		t.Errorf("ExecStart=%s: want .../pregao serve", one("ExecStart"))
	}
	if one("DynamicUser") != "yes" && (one("User") == "(unset)" || one("User") == "root") {
		t.Error("the service runs as root: want User= or DynamicUser=yes")
	}
	if !slices.Contains(svc["SystemCallFilter"], "@system-service") {
		t.Errorf("SystemCallFilter=%v: want @system-service", svc["SystemCallFilter"])
	}
	env := map[string]string{}
	vars := serveFlagEnv()
	for _, e := range svc["Environment"] {
		for _, kv := range strings.Fields(e) {
			k, v, _ := strings.Cut(kv, "=")
			env[k] = v
			if strings.HasPrefix(k, envPrefix) && !vars[k] {
				t.Errorf("Environment=%s names no serve flag", kv)
			}
		}
	}
	// /metrics lists the keys' names and their use: on a port of its own,
	// never behind a proxy in front of the API's.
	if _, port, _ := strings.Cut(env["PREGAO_ADDR"], ":"); env["PREGAO_METRICS_ADDR"] == "" || strings.HasSuffix(env["PREGAO_METRICS_ADDR"], ":"+port) {
		t.Errorf("PREGAO_METRICS_ADDR=%q: want /metrics apart from PREGAO_ADDR=%q", env["PREGAO_METRICS_ADDR"], env["PREGAO_ADDR"])
	}
	readOnly := strings.Fields(strings.Join(svc["ReadOnlyPaths"], " "))
	for _, k := range []string{"PREGAO_SNAPSHOT", "PREGAO_KEYS"} {
		if env[k] == "" {
			t.Errorf("no Environment=%s", k)
		} else if !slices.Contains(readOnly, path.Dir(env[k])) {
			t.Errorf("ReadOnlyPaths=%v lacks %s, the directory of %s", readOnly, path.Dir(env[k]), k)
		}
	}
	// systemd waits for the server's whole shutdown budget before it
	// kills it: drain, close grace and shutdown timeout, plus a margin.
	def := DefaultServeConfig()
	budget := def.Drain + def.CloseGrace + def.ShutdownTimeout
	for _, k := range []string{"PREGAO_DRAIN", "PREGAO_SHUTDOWN_TIMEOUT", "PREGAO_CLOSE_GRACE"} {
		if v, ok := env[k]; ok {
			t.Errorf("Environment=%s=%s: the unit sets it, so TimeoutStopSec must follow it (update this test)", k, v)
		}
	}
	stop, err := time.ParseDuration(one("TimeoutStopSec"))
	if err != nil || stop < budget+5*time.Second {
		t.Errorf("TimeoutStopSec=%s: the server may take %v to stop (drain %v + close grace %v + shutdown timeout %v): want at least %v",
			one("TimeoutStopSec"), budget, def.Drain, def.CloseGrace, def.ShutdownTimeout, budget+5*time.Second)
	}
	// A remote snapshot's local copy goes to a folder the service may
	// write: its CacheDirectory.
	if cache := one("CacheDirectory"); cache == "(unset)" || env["PREGAO_SNAPSHOT_CACHE"] != "/var/cache/"+cache {
		t.Errorf("CacheDirectory=%s, PREGAO_SNAPSHOT_CACHE=%q: want the cache folder systemd makes writable", cache, env["PREGAO_SNAPSHOT_CACHE"])
	}
	// So do the flat files: the default, the user's home, is read-only
	// (ProtectSystem=strict), and GET /files would answer 503 forever.
	if cache := one("CacheDirectory"); !strings.HasPrefix(env["PREGAO_FILES_DIR"], "/var/cache/"+cache+"/") {
		t.Errorf("PREGAO_FILES_DIR=%q: want a folder in the CacheDirectory (/var/cache/%s/)", env["PREGAO_FILES_DIR"], cache)
	}
	// A live session's logs too: the docs' --live-dir for the unit is
	// its StateDirectory, writable and kept, outside the read-only paths.
	doc, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	state := one("StateDirectory")
	if !bytes.Contains(doc, []byte("PREGAO_LIVE_DIR=/var/lib/"+state+"`")) || slices.ContainsFunc(readOnly, func(p string) bool { return strings.HasPrefix("/var/lib/"+state+"/", strings.TrimSuffix(p, "/")+"/") }) {
		t.Errorf("StateDirectory=%s: want the docs' PREGAO_LIVE_DIR for the unit, outside ReadOnlyPaths %v", state, readOnly)
	}
	if len(u["Unit"]["Description"]) == 0 || !slices.Contains(u["Install"]["WantedBy"], "multi-user.target") {
		t.Errorf("[Unit] Description and [Install] WantedBy=multi-user.target: %v %v", u["Unit"], u["Install"])
	}
}

// versionAtLeast reports whether the dotted version a (1.26.10) is b or
// later, number by number.
func versionAtLeast(a, b string) bool {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < max(len(as), len(bs)); i++ {
		var x, y int
		if i < len(as) {
			x, _ = strconv.Atoi(as[i])
		}
		if i < len(bs) {
			y, _ = strconv.Atoi(bs[i])
		}
		if x != y {
			return x > y
		}
	}
	return true
}

// make release-check accepts a clean release that CHANGELOG.md has a
// section for (v0.1.0), and refuses a dirty tree, a commit past a
// release, a bare commit and a version without a section; make release
// runs it, then builds the binaries, an SBOM of each and the checksums.
func TestReleaseTarget(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	check := func(version string, ok bool, want string) {
		t.Helper()
		out, err := exec.Command("make", "-s", "--no-print-directory", "-C", "../..", "release-check", "VERSION="+version).CombinedOutput()
		if (err == nil) != ok || !strings.Contains(string(out), want) {
			t.Errorf("make release-check VERSION=%s: %v %q", version, err, out)
		}
	}
	check("v0.1.0", true, "")
	check("v0.1.0-dirty", false, "not a clean release")
	check("v0.1.0-3-gddf5ca1", false, "not a clean release")
	check("v0.1.0+4f16615", false, "not a clean release")
	check("ddf5ca1", false, "not vX.Y.Z")
	check("v9.9.9", false, "CHANGELOG.md has no section ## [9.9.9]")
	out, err := exec.Command("make", "-n", "--no-print-directory", "-C", "../..", "release", "VERSION=v0.1.0").CombinedOutput()
	if err != nil {
		t.Fatalf("make -n release: %v\n%s", err, out)
	}
	for _, want := range []string{"CHANGELOG.md", "cyclonedx-gomod", "SHA256SUMS", "GOTOOLCHAIN="} {
		if !strings.Contains(string(out), want) {
			t.Errorf("make release does not run %s:\n%s", want, out)
		}
	}
}

// The tree's release (cmd/pregao/release.go) is CHANGELOG.md's newest
// release section, and make names it in the version it stamps.
func TestReleaseInTree(t *testing.T) {
	changelog, err := os.ReadFile("../../CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^## \[(\d+\.\d+\.\d+)\] - \d{4}-\d{2}-\d{2}$`).FindSubmatch(changelog)
	if m == nil || "v"+string(m[1]) != release {
		t.Errorf("release %s, CHANGELOG.md's newest release section %q", release, m)
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	out, err := exec.Command("make", "-s", "--no-print-directory", "-C", "../..", "version").Output()
	if v := strings.TrimSpace(string(out)); err != nil || !strings.HasPrefix(v, release) || !semverRE.MatchString(v) {
		t.Errorf("make version: %q %v: want %s, past it or with build metadata", v, err, release)
	}
}

// scratchGitEnv returns the environment for git and make in a scratch
// repository: the process's, without any GIT_ variable (a GIT_DIR,
// GIT_WORK_TREE or GIT_INDEX_FILE exported by whatever runs the tests,
// such as git rebase --exec, would point every git command at that
// repository instead of the scratch one), with a fixed author and no
// user or system configuration.
func scratchGitEnv() []string {
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "GIT_") })
	return append(env, "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid", "GIT_COMMITTER_NAME=t",
		"GIT_COMMITTER_EMAIL=t@example.invalid", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
}

// scratchGitEnv leaves out the git variables of the caller's environment.
func TestScratchGitEnv(t *testing.T) {
	t.Setenv("GIT_DIR", "/elsewhere/.git")
	t.Setenv("GIT_WORK_TREE", "/elsewhere")
	t.Setenv("GIT_INDEX_FILE", "/elsewhere/.git/index")
	env := scratchGitEnv()
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); k == "GIT_DIR" || k == "GIT_WORK_TREE" || k == "GIT_INDEX_FILE" {
			t.Errorf("the scratch repository's environment has %s", kv)
		}
	}
	if !slices.Contains(env, "GIT_CONFIG_NOSYSTEM=1") || !slices.Contains(env, "PATH="+os.Getenv("PATH")) {
		t.Errorf("environment %v lacks its own settings or the caller's PATH", env)
	}
}

// The version make stamps comes from the tree, not the tags: in a
// repository without any tag, the commit whose CHANGELOG.md gained the
// release's section is that release, later commits are past it
// (-N-gCOMMIT, -dirty), and make release RELEASE=vX.Y.Z moves the
// Unreleased section under vX.Y.Z, sets the tree's release and commits
// and tags both; the version stays vX.Y.Z once the tag is gone. It
// refuses a dirty tree, a version that is not vX.Y.Z or not past the
// tree's release, and an empty Unreleased section.
func TestReleaseVersionFromTree(t *testing.T) {
	for _, tool := range []string{"make", "git"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	dir := t.TempDir()
	env := scratchGitEnv()
	run := func(name string, args ...string) (string, error) {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	must := func(name string, args ...string) string {
		t.Helper()
		out, err := run(name, args...)
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return out
	}
	write := func(name, text string) {
		t.Helper()
		if err := os.MkdirAll(path.Dir(path.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	makefile, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	version := func(want string) {
		t.Helper()
		if got := must("make", "-s", "--no-print-directory", "version"); got != want {
			t.Errorf("make version: %s, want %s", got, want)
		}
	}
	head := func() string { return must("git", "rev-parse", "--short", "HEAD") }
	const links = "[Unreleased]: https://github.com/pregao/pregao/compare/v0.1.0...HEAD\n[0.1.0]: https://github.com/pregao/pregao/releases/tag/v0.1.0\n"

	must("git", "init", "-q")
	write("Makefile", string(makefile))
	write("cmd/pregao/release.go", "package main\n\nconst release = \"v0.1.0\"\n")
	write("CHANGELOG.md", "# Changelog\n\n## [Unreleased]\n\n- first\n")
	must("git", "add", ".")
	must("git", "commit", "-q", "-m", "before the release")
	version("v0.1.0+" + head()) // the release's commit is not there yet

	write("CHANGELOG.md", "# Changelog\n\n## [Unreleased]\n\n## [0.1.0] - 2026-11-27\n\n- first\n\n"+links)
	must("git", "commit", "-q", "-am", "0.1.0")
	version("v0.1.0") // the commit CHANGELOG.md calls 0.1.0, no tag
	if out, err := run("make", "-s", "release-bump", "RELEASE=v0.2.0"); err == nil || !strings.Contains(out, "Unreleased section is empty") {
		t.Errorf("release of an empty Unreleased section: %v %s", err, out)
	}

	write("CHANGELOG.md", "# Changelog\n\n## [Unreleased]\n\n- second\n\n## [0.1.0] - 2026-11-27\n\n- first\n\n"+links)
	must("git", "commit", "-q", "-am", "a change")
	version("v0.1.0-1-g" + head())
	write("notes.txt", "x")
	must("git", "add", "notes.txt")
	version("v0.1.0-1-g" + head() + "-dirty")
	for release, want := range map[string]string{"v0.2.0": "uncommitted changes"} {
		if out, err := run("make", "-s", "release-bump", "RELEASE="+release); err == nil || !strings.Contains(out, want) {
			t.Errorf("release-bump RELEASE=%s on a dirty tree: %v %s", release, err, out)
		}
	}
	must("git", "commit", "-q", "-m", "notes")
	for release, want := range map[string]string{"v0.1.0": "not after the tree's release", "v0.0.9": "not after", "v1.2": "not vX.Y.Z", "v1.2.x": "not vX.Y.Z", "2.0.0": "not vX.Y.Z"} {
		if out, err := run("make", "-s", "release-bump", "RELEASE="+release); err == nil || !strings.Contains(out, want) {
			t.Errorf("release-bump RELEASE=%s: %v %s, want %q", release, err, out, want)
		}
	}

	if out := must("make", "-s", "--no-print-directory", "release-bump", "RELEASE=v0.2.0"); !strings.Contains(out, "committed and tagged v0.2.0") {
		t.Errorf("release-bump: %s", out)
	}
	today := time.Now().UTC().Format("2006-01-02")
	wantLog := "# Changelog\n\n## [Unreleased]\n\n## [0.2.0] - " + today + "\n\n- second\n\n## [0.1.0] - 2026-11-27\n\n- first\n\n" +
		"[Unreleased]: https://github.com/pregao/pregao/compare/v0.2.0...HEAD\n[0.2.0]: https://github.com/pregao/pregao/releases/tag/v0.2.0\n[0.1.0]: https://github.com/pregao/pregao/releases/tag/v0.1.0\n"
	if b, _ := os.ReadFile(path.Join(dir, "CHANGELOG.md")); string(b) != wantLog {
		t.Errorf("CHANGELOG.md after the release:\n%s\nwant\n%s", b, wantLog)
	}
	if b, _ := os.ReadFile(path.Join(dir, "cmd/pregao/release.go")); !strings.Contains(string(b), "const release = \"v0.2.0\"\n") {
		t.Errorf("release.go after the release:\n%s", b)
	}
	if subject := must("git", "log", "-1", "--format=%s"); subject != "release: v0.2.0" || must("git", "status", "--porcelain") != "" {
		t.Errorf("the release's commit %q, status %q", subject, must("git", "status", "--porcelain"))
	}
	if tag := must("git", "describe", "--tags", "--exact-match"); tag != "v0.2.0" {
		t.Errorf("tag %q", tag)
	}
	version("v0.2.0")
	must("make", "-s", "release-check")
	must("git", "tag", "-d", "v0.2.0") // a clone without the tags
	version("v0.2.0")
	write("notes.txt", "y")
	must("git", "commit", "-q", "-am", "after the release")
	version("v0.2.0-1-g" + head())
	if out, err := run("make", "-s", "release-check"); err == nil || !strings.Contains(out, "not a clean release") {
		t.Errorf("release-check past the release: %v %s", err, out)
	}
}
