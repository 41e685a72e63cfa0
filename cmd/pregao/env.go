package main

import (
	"errors"
	"flag"
	"fmt"
	"strings"
)

// envPrefix starts the environment variable of every serve flag.
const envPrefix = "PREGAO_"

// envName returns the environment variable that sets the flag name:
// PREGAO_ and the name in capitals with '-' as '_' (max-body:
// PREGAO_MAX_BODY).
func envName(name string) string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// setFromEnv sets every flag of fs whose environment variable (envName)
// lookup finds with a non-empty value; an empty variable counts as unset.
// Call it before fs.Parse, so that flags on the command line win. A value
// the flag refuses is an error naming the variable; every such error is
// returned, joined.
func setFromEnv(fs *flag.FlagSet, lookup func(string) (string, bool)) error {
	var errs []error
	fs.VisitAll(func(f *flag.Flag) {
		name := envName(f.Name)
		v, ok := lookup(name)
		if !ok || v == "" {
			return
		}
		if err := fs.Set(f.Name, v); err != nil {
			kind, _ := flag.UnquoteUsage(f)
			errs = append(errs, fmt.Errorf("environment variable %s=%q: invalid %s for --%s (%v)", name, v, kind, f.Name, err))
		}
	})
	return errors.Join(errs...)
}

// envUsage writes fs's usage, flags and the environment variable of each
// to fs.Output().
func envUsage(fs *flag.FlagSet) {
	w := fs.Output()
	fmt.Fprintf(w, "Usage of %s:\n", fs.Name())
	fs.PrintDefaults()
	fmt.Fprintf(w, "\nEvery flag can also be set by an environment variable, %s and the flag's\n", envPrefix)
	fmt.Fprintln(w, "name in capitals with '-' as '_'; a flag on the command line wins:")
	fs.VisitAll(func(f *flag.Flag) {
		fmt.Fprintf(w, "  --%-10s %s\n", f.Name, envName(f.Name))
	})
}

// enumFlag is a string flag that accepts only the listed values, so that
// a misspelt value is refused when it is parsed, whether it comes from
// the command line or the environment.
type enumFlag struct {
	p       *string
	allowed []string
}

// newEnum returns an enumFlag storing into p; *p must be one of allowed.
func newEnum(p *string, allowed ...string) *enumFlag { return &enumFlag{p, allowed} }

func (e *enumFlag) String() string {
	if e == nil || e.p == nil {
		return ""
	}
	return *e.p
}

func (e *enumFlag) Set(v string) error {
	for _, a := range e.allowed {
		if v == a {
			*e.p = v
			return nil
		}
	}
	return fmt.Errorf("want %s", strings.Join(e.allowed, " or "))
}
