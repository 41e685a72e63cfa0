package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"text/tabwriter"
	"time"

	"github.com/pregao/pregao/httpapi"
)

// runKeys manages the keys file: pregao keys add|list|remove --file FILE.
func runKeys(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New("keys: want a subcommand: add, list or remove")
	}
	sub := args[0]
	fs := flag.NewFlagSet("keys "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	file := fs.String("file", "keys.json", "keys file (holds only SHA-256 digests of the keys)")
	name := fs.String("name", "", "key name")
	plan := fs.String("plan", httpapi.PlanDelayed, "plan: delayed (15-minute delayed quotes, every option) or eod (previous session only)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("keys %s: unexpected argument %q", sub, fs.Arg(0))
	}
	switch sub {
	case "add":
		if *name == "" {
			return errors.New("keys add: --name is required")
		}
		// The key is added under the keys file's lock: concurrent adds and
		// removes are serialized and none is lost.
		var key string
		err := httpapi.UpdateKeysFile(*file, func(f *httpapi.KeysFile) (err error) {
			key, err = f.AddKey(*name, *plan, time.Now())
			return err
		})
		if err != nil {
			return fmt.Errorf("keys add: %w", err)
		}
		fmt.Fprintln(stdout, key)
		fmt.Fprintf(stderr, "key %q (plan %s) added to %s; it is shown only now: store it safely\n", *name, *plan, *file)
		return nil
	case "list":
		if _, err := os.Stat(*file); err != nil {
			return fmt.Errorf("keys list: %w (create a key with: pregao keys add --file %s --name NAME --plan delayed)", err, *file)
		}
		f, err := httpapi.ReadKeysFile(*file)
		if err != nil {
			return fmt.Errorf("keys: %w", err)
		}
		if len(f.Keys) == 0 {
			fmt.Fprintf(stderr, "%s holds no key\n", *file)
			return nil
		}
		sort.Slice(f.Keys, func(i, j int) bool { return f.Keys[i].Name < f.Keys[j].Name })
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tPLAN\tCREATED\tSHA256")
		for _, e := range f.Keys {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s…\n", e.Name, e.Plan, e.CreatedAt.Format(time.RFC3339), e.SHA256[:12])
		}
		return tw.Flush()
	case "remove":
		if *name == "" {
			return errors.New("keys remove: --name is required")
		}
		err := httpapi.UpdateKeysFile(*file, func(f *httpapi.KeysFile) error { return f.RemoveKey(*name) })
		if err != nil {
			return fmt.Errorf("keys remove: %w", err)
		}
		fmt.Fprintf(stderr, "key %q removed from %s\n", *name, *file)
		return nil
	}
	return fmt.Errorf("keys: unknown subcommand %q (want add, list or remove)", sub)
}
