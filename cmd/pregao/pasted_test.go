package main

import (
	"bufio"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// pastedShells are the shells the printed commands must run in as pasted:
// each reads them on its standard input as an interactive shell does
// (zsh then takes # literally and stops on an unquoted ? that matches
// no file).
var pastedShells = []struct {
	name string
	args []string
	// bad matches what the shell writes on an error.
	bad *regexp.Regexp
}{
	{"bash", []string{"--norc", "--noprofile", "-i"}, regexp.MustCompile(`(?m)^bash: .*(syntax error|command not found|No such file|unexpected)`)},
	{"zsh", []string{"-f", "-i"}, regexp.MustCompile(`(?m)zsh: (no matches found|command not found|parse error|unmatched|bad pattern|number expected)`)},
}

// TestDocsExamplesPasted: every command README.md's shell blocks and
// make run's closing text (make run-banner) print runs as pasted in bash
// and zsh, on the scale-1 demo, and every curl among them answers 200
// with JSON. The only change to the texts is the address of the test's
// server for 127.0.0.1:8080. Without zsh the zsh half is skipped, saying
// so (.ci/run installs it).
func TestDocsExamplesPasted(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("builds the scale-1 demo (make test runs it in its pass without -race)")
	}
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed: the printed commands are curl commands")
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed: make run's text is printed by make")
	}
	ds, err := demoDataset()
	if err != nil {
		t.Fatal(err)
	}
	api, key := apiWithKey(t, ds)
	var mu sync.Mutex
	var answers []string
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		api.ServeHTTP(rec, r)
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
		mu.Lock()
		answers = append(answers, r.Method+" "+r.URL.String()+" → "+http.StatusText(rec.Code)+" "+strings.TrimSpace(rec.Body.String()[:min(rec.Body.Len(), 120)]))
		mu.Unlock()
	}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv.Listener = ln
	srv.Start()
	defer srv.Close()
	addr := ln.Addr().String()

	// The folder the commands run in: README's read the key from
	// .cache/demo.key, as in the repository after make run.
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".cache"), 0o755); err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(dir, ".cache", "demo.key")
	if err := os.WriteFile(keyFile, []byte(key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	texts := map[string][]string{}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for i, block := range shellBlocks(string(readme)) {
		var cmds []string
		for _, l := range block {
			if strings.Contains(l, " #") || strings.HasPrefix(l, "#") {
				t.Errorf("README.md, shell block %d: %q has a comment: zsh runs # as a word when pasted", i+1, l)
			}
			if strings.HasPrefix(l, "curl ") || strings.HasPrefix(l, "KEY=") {
				cmds = append(cmds, strings.ReplaceAll(l, "127.0.0.1:8080", addr))
			}
		}
		if len(cmds) > 0 {
			texts["README.md block "+itoa(i+1)] = cmds
		}
	}
	banner, err := exec.Command("make", "-s", "--no-print-directory", "-C", "../..", "run-banner", "DEMO_KEY="+keyFile, "ADDR="+addr).CombinedOutput()
	if err != nil {
		t.Fatalf("make run-banner: %v\n%s", err, banner)
	}
	var cmds []string
	for _, l := range strings.Split(string(banner), "\n") {
		if strings.HasPrefix(l, "curl ") || strings.HasPrefix(l, "KEY=") {
			cmds = append(cmds, l)
		}
	}
	texts["make run"] = cmds
	if !strings.Contains(string(banner), "API key (plan delayed): "+key) || !strings.Contains(string(banner), "http://"+addr+"/docs") {
		t.Errorf("make run's text lacks the key or the reference page's address:\n%s", banner)
	}
	if last := strings.TrimSpace(string(banner)); !strings.HasSuffix(last, cmds[len(cmds)-1]) {
		t.Errorf("make run's text does not end with its examples:\n%s", banner)
	}

	for name, cmds := range texts {
		ncurl := 0
		for _, c := range cmds {
			if strings.HasPrefix(c, "curl ") {
				ncurl++
			}
		}
		if ncurl == 0 {
			t.Errorf("%s: no curl command", name)
		}
		for _, sh := range pastedShells {
			if _, err := exec.LookPath(sh.name); err != nil {
				t.Logf("%s is not installed: %s's commands not run in it (Debian: apt-get install %s)", sh.name, name, sh.name)
				continue
			}
			mu.Lock()
			answers = answers[:0]
			mu.Unlock()
			cmd := exec.Command(sh.name, sh.args...)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "HOME="+dir, "HISTFILE=/dev/null", "PS1=", "PROMPT=")
			cmd.Stdin = strings.NewReader(strings.Join(cmds, "\n") + "\n")
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			done := make(chan error, 1)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			go func() { done <- cmd.Wait() }()
			select {
			case err = <-done:
			case <-time.After(2 * time.Minute):
				cmd.Process.Kill()
				t.Fatalf("%s in %s: still running after 2 minutes", name, sh.name)
			}
			if m := sh.bad.FindString(stderr.String()); m != "" || err != nil {
				t.Errorf("%s, pasted in %s: %v %q\n%s", name, sh.name, err, m, stderr.String())
			}
			mu.Lock()
			got := append([]string(nil), answers...)
			mu.Unlock()
			if len(got) != ncurl {
				t.Errorf("%s, pasted in %s: %d requests for %d curl commands: %q", name, sh.name, len(got), ncurl, got)
			}
			for _, a := range got {
				if !strings.Contains(a, " → OK {") && !strings.Contains(a, " → OK [") {
					t.Errorf("%s, pasted in %s: %s", name, sh.name, a)
				}
			}
		}
	}
}

// shellBlocks returns the lines of the ```sh blocks of a Markdown text.
func shellBlocks(md string) [][]string {
	var out [][]string
	sc := bufio.NewScanner(strings.NewReader(md))
	var cur []string
	in := false
	for sc.Scan() {
		l := sc.Text()
		switch {
		case !in && (l == "```sh" || l == "```bash" || l == "```shell"):
			in, cur = true, nil
		case in && strings.HasPrefix(l, "```"):
			in = false
			out = append(out, cur)
		case in:
			cur = append(cur, l)
		}
	}
	return out
}
