package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/pregao/pregao/httpapi"
)

// runKeys manages the keys file: pregao keys add|list|remove --file FILE.
func runKeys(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New("keys: want a subcommand: add, list, remove or limit")
	}
	sub := args[0]
	switch sub {
	case "-h", "-help", "--help", "help":
		fmt.Fprintln(stderr, "usage: pregao keys add|list|remove|limit [flags]  (pregao keys add -h for the flags)")
		return flag.ErrHelp
	case "add", "list", "remove", "limit":
	default:
		return fmt.Errorf("keys: unknown subcommand %q (want add, list, remove or limit)", sub)
	}
	fs := flag.NewFlagSet("keys "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	file := fs.String("file", "keys.json", "keys file (holds only SHA-256 digests of the keys)")
	name := fs.String("name", "", "key name")
	plan := fs.String("plan", httpapi.PlanDelayed, "plan: delayed (15-minute delayed quotes, every option) or eod (previous session only)")
	admin := fs.Bool("admin", false, "with add: give the key the admin scope (the /admin push routes of the live feed); without --plan it sees no market data")
	perSec := fs.Float64("rate", 0, "requests a second: with add, this key's own limit; with limit, the plan's (0: no limit)")
	burst := fs.Int("burst", 0, "with --rate: the most requests at once (default: the rate rounded up)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("keys %s: unexpected argument %q", sub, fs.Arg(0))
	}
	rateSet, planSet, burstSet := false, false, false
	fs.Visit(func(f *flag.Flag) {
		rateSet = rateSet || f.Name == "rate"
		planSet = planSet || f.Name == "plan"
		burstSet = burstSet || f.Name == "burst"
	})
	if burstSet && !rateSet {
		return fmt.Errorf("keys %s: --burst goes with --rate (a burst without a rate limits nothing)", sub)
	}
	switch sub {
	case "add":
		if *name == "" {
			return errors.New("keys add: --name is required")
		}
		// The key is added under the keys file's lock: concurrent adds and
		// removes are serialized and none is lost.
		var scopes []string
		if *admin {
			scopes = []string{httpapi.ScopeAdmin}
			if !planSet {
				*plan = "" // an admin key sees no market data unless asked
			}
		}
		var key string
		err := httpapi.UpdateKeysFile(*file, func(f *httpapi.KeysFile) (err error) {
			key, err = f.AddKey(*name, *plan, time.Now(), scopes...)
			if err == nil && rateSet {
				f.Keys[len(f.Keys)-1].Limit = &httpapi.Limit{PerSecond: *perSec, Burst: *burst}
				_, err = httpapi.NewKeys(*f) // validates the limit
			}
			return err
		})
		if err != nil {
			return fmt.Errorf("keys add: %w", err)
		}
		fmt.Fprintln(stdout, key)
		what := "plan " + *plan
		switch {
		case *admin && *plan == "":
			what = "admin scope, no plan: it may call only the /admin routes"
		case *admin:
			what += " and the admin scope (separate keys for the feed and for readers are safer)"
		}
		fmt.Fprintf(stderr, "key %q (%s) added to %s; it is shown only now: store it safely\n", *name, what, *file)
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
		fmt.Fprintln(tw, "NAME\tPLAN\tSCOPES\tLIMIT\tCREATED\tSHA256")
		for _, e := range f.Keys {
			l, ok := f.Limits[e.Plan]
			if e.Limit != nil {
				l, ok = *e.Limit, true
			}
			lim := "none"
			if ok && l.PerSecond > 0 {
				lim = fmt.Sprintf("%g/s", l.PerSecond)
				if l.Burst > 0 {
					lim += fmt.Sprintf(" burst %d", l.Burst)
				}
			}
			plan, scopes := e.Plan, strings.Join(e.Scopes, ",")
			if plan == "" {
				plan = "-"
			}
			if scopes == "" {
				scopes = "-"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s…\n", e.Name, plan, scopes, lim, e.CreatedAt.Format(time.RFC3339), e.SHA256[:12])
		}
		return tw.Flush()
	case "remove":
		if *name == "" {
			return errors.New("keys remove: --name is required")
		}
		last := false
		err := httpapi.UpdateKeysFile(*file, func(f *httpapi.KeysFile) error {
			err := f.RemoveKey(*name)
			last = len(f.Keys) == 0
			return err
		})
		if err != nil {
			return fmt.Errorf("keys remove: %w", err)
		}
		fmt.Fprintf(stderr, "key %q removed from %s\n", *name, *file)
		if last {
			fmt.Fprintf(stderr, "%s holds no key now (allow_empty): a server reading it accepts no key\n", *file)
		}
		return nil
	case "limit":
		if !rateSet {
			return errors.New("keys limit: --rate is required (0 removes the plan's limit)")
		}
		err := httpapi.UpdateKeysFile(*file, func(f *httpapi.KeysFile) error {
			if f.Limits == nil {
				f.Limits = map[string]httpapi.Limit{}
			}
			if *perSec == 0 {
				delete(f.Limits, *plan)
			} else {
				f.Limits[*plan] = httpapi.Limit{PerSecond: *perSec, Burst: *burst}
			}
			_, err := httpapi.NewKeys(*f) // validates plan and limit
			return err
		})
		if err != nil {
			return fmt.Errorf("keys limit: %w", err)
		}
		fmt.Fprintf(stderr, "plan %s limited to %g requests a second in %s (0: no limit); a running server applies it on its next keys reload\n", *plan, *perSec, *file)
		return nil
	}
	return fmt.Errorf("keys: unknown subcommand %q (want add, list, remove or limit)", sub)
}
