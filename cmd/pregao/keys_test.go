package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/pregao/pregao/httpapi"
)

// TestHelperProcess is not a test: run as a child process with
// PREGAO_HELPER_PROCESS=1, it runs the pregao command given after "--"
// as main does (signals included) and exits with main's status.
func TestHelperProcess(t *testing.T) {
	if os.Getenv("PREGAO_HELPER_PROCESS") != "1" {
		return
	}
	args := os.Args
	for i, a := range args {
		if a == "--" {
			args = args[i+1:]
			break
		}
	}
	os.Exit(mainStatus(args, os.Stdout, os.Stderr))
}

// pregaoProcess returns a command running pregao with args in a child
// process (this test binary).
func pregaoProcess(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestHelperProcess$", "--"}, args...)...)
	cmd.Env = append(os.Environ(), "PREGAO_HELPER_PROCESS=1")
	return cmd
}

// TestKeysConcurrentProcesses runs 20 `keys add` processes and a `keys
// remove` at once on one file: every key a process printed is in the file
// and the removed key is not.
func TestKeysConcurrentProcesses(t *testing.T) {
	file := filepath.Join(t.TempDir(), "keys.json")
	var out bytes.Buffer
	if err := runKeys(context.Background(), []string{"add", "--file", file, "--name", "victim"}, &out, &out); err != nil {
		t.Fatal(err)
	}
	victim := strings.TrimSpace(strings.Split(out.String(), "\n")[0])
	const n = 20
	keys := make([]string, n)
	var wg sync.WaitGroup
	for i := 0; i <= n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			var cmd *exec.Cmd
			if i == n {
				cmd = pregaoProcess("keys", "remove", "--file", file, "--name", "victim")
			} else {
				cmd = pregaoProcess("keys", "add", "--file", file, "--name", fmt.Sprintf("k%02d", i), "--plan", "eod")
			}
			b, err := cmd.Output()
			if err != nil {
				t.Errorf("process %d: %v", i, err)
				return
			}
			if i < n {
				keys[i] = strings.TrimSpace(string(b))
			}
		}(i)
	}
	wg.Wait()
	ks, err := httpapi.LoadKeys(file)
	if err != nil {
		t.Fatal(err)
	}
	if ks.Len() != n {
		t.Errorf("%d keys in the file, want %d", ks.Len(), n)
	}
	for i, k := range keys {
		if _, ok := ks.Lookup(k); !ok {
			t.Errorf("key of process %d (exit 0) is not in the file", i)
		}
	}
	if _, ok := ks.Lookup(victim); ok {
		t.Error("the removed key is in the file")
	}
}

func TestKeysListMissingFile(t *testing.T) {
	var out bytes.Buffer
	file := filepath.Join(t.TempDir(), "none.json")
	err := runKeys(context.Background(), []string{"list", "--file", file}, &out, &out)
	if err == nil || !strings.Contains(err.Error(), "keys add") {
		t.Errorf("keys list of a missing file: %v, want an error pointing to keys add", err)
	}
	os.WriteFile(file, []byte(`{"keys":[]}`), 0o600)
	out.Reset()
	if err := runKeys(context.Background(), []string{"list", "--file", file}, &out, &out); err != nil || !strings.Contains(out.String(), "holds no key") {
		t.Errorf("keys list of an empty file: %v %q", err, out.String())
	}
}

// TestKeysLimits: keys add --rate gives a key its own limit, keys limit
// sets a plan's, list shows them, and invalid limits are refused without
// touching the file.
func TestKeysLimits(t *testing.T) {
	file := filepath.Join(t.TempDir(), "keys.json")
	run := func(args ...string) (string, error) {
		var out bytes.Buffer
		err := runKeys(context.Background(), args, &out, &out)
		return out.String(), err
	}
	if _, err := run("add", "--file", file, "--name", "fast", "--rate", "50", "--burst", "100"); err != nil {
		t.Fatal(err)
	}
	if _, err := run("add", "--file", file, "--name", "slow", "--plan", "eod"); err != nil {
		t.Fatal(err)
	}
	if _, err := run("limit", "--file", file, "--plan", "eod", "--rate", "2"); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(file)
	for _, args := range [][]string{
		{"add", "--file", file, "--name", "bad", "--rate", "-1"},
		{"limit", "--file", file, "--plan", "eod", "--rate", "-1"},
		{"limit", "--file", file, "--plan", "gold", "--rate", "1"},
		{"limit", "--file", file, "--plan", "eod"},
	} {
		if _, err := run(args...); err == nil {
			t.Errorf("%v: accepted", args)
		}
	}
	if after, _ := os.ReadFile(file); !bytes.Equal(before, after) {
		t.Error("a refused change altered the file")
	}
	out, err := run("list", "--file", file)
	if err != nil || !strings.Contains(out, "50/s burst 100") || !strings.Contains(out, "2/s") {
		t.Errorf("list: %v\n%s", err, out)
	}
	f, err := httpapi.ReadKeysFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if k, err := httpapi.NewKeys(f); err != nil || k.Len() != 2 || f.Limits["eod"].PerSecond != 2 {
		t.Errorf("file: %v %+v", err, f)
	}
}

// keys add, remove and limit on a keys file reached through symbolic
// links (as a mounted configuration is) change the file the links name,
// atomically in its own folder, and leave every link a link.
func TestKeysThroughSymlink(t *testing.T) {
	root := t.TempDir()
	target := filepath.Join(root, "secrets", "keys.json")
	os.MkdirAll(filepath.Dir(target), 0o755)
	var out bytes.Buffer
	if err := runKeys(context.Background(), []string{"add", "--file", target, "--name", "first"}, &out, &out); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(root, "keys.json")
	if err := os.Symlink("secrets/keys.json", link); err != nil {
		t.Fatal(err)
	}
	chain := filepath.Join(root, "etc-keys.json")
	if err := os.Symlink(link, chain); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"add", "--file", link, "--name", "second"},
		{"add", "--file", chain, "--name", "third"},
		{"remove", "--file", link, "--name", "first"},
		{"limit", "--file", chain, "--plan", "eod", "--rate", "5"},
	} {
		if err := runKeys(context.Background(), args, &out, &out); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
	}
	for _, l := range []string{link, chain} {
		if st, err := os.Lstat(l); err != nil || st.Mode()&os.ModeSymlink == 0 {
			t.Errorf("%s is no longer a symbolic link (%v)", l, err)
		}
	}
	f, err := httpapi.ReadKeysFile(target)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, k := range f.Keys {
		names = append(names, k.Name)
	}
	if strings.Join(names, ",") != "second,third" || f.Limits["eod"].PerSecond != 5 {
		t.Errorf("target holds keys %v, limits %v; want second,third and eod at 5/s", names, f.Limits)
	}
	if ents, _ := os.ReadDir(root); len(ents) != 3 { // secrets and the two links: the lock is beside the target
		var n []string
		for _, e := range ents {
			n = append(n, e.Name())
		}
		t.Errorf("folder of the links holds %v", n)
	}
}

// The keys command's refusals: -h prints its usage (status 0), an
// unknown subcommand is named before any flag is read, a --burst
// without --rate is refused rather than dropped, and a --file that is a
// folder is refused without leaving a lock file beside it.
func TestKeysRefusals(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "keys.json")
	for _, c := range []struct {
		args []string
		want int
		msg  string
	}{
		{[]string{"keys", "-h"}, 0, "usage: pregao keys"},
		{[]string{"keys", "revoke", "-h"}, 2, `unknown subcommand "revoke"`},
		{[]string{"keys", "add", "--name", "x", "--burst", "5", "--file", file}, 2, "--burst goes with --rate"},
		{[]string{"keys", "add", "--name", "x", "--file", dir}, 2, "not a regular file"},
	} {
		var out, errOut bytes.Buffer
		got := mainStatus(c.args, &out, &errOut)
		if got != c.want || !strings.Contains(errOut.String(), c.msg) {
			t.Errorf("pregao %v: status %d, %q; want %d and %q", c.args, got, errOut.String(), c.want, c.msg)
		}
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Error("a refused --burst wrote the keys file")
	}
	if _, err := os.Stat(dir + ".lock"); !os.IsNotExist(err) {
		t.Error("a refused folder left a lock file beside it")
	}
}
