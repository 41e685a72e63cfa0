// Command pregao builds, inspects and serves Pregão market-data snapshots.
//
// Usage: pregao <command> [flags]. Run "pregao help" for the list.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// command is one subcommand. run parses args with its own FlagSet and
// writes human output to stdout; it returns an error for the exit status.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

func commands() []command {
	return []command{
		{"serve", "serve the HTTP API from a snapshot", runServe},
		{"generate", "write the deterministic demo universe as a source bundle", runGenerate},
		{"build", "validate a source bundle and write a snapshot", runBuild},
		{"inspect", "print a snapshot's header and entity counts", runInspect},
		{"verify", "check a whole snapshot as the server's loader does", runVerify},
		{"keys", "manage API keys (keys add --name N --plan delayed|eod)", runKeys},
		{"import", "turn official B3/CVM files into a source bundle", runImport},
		{"fetch", "download official B3/CVM files into a folder", runFetch},
		{"update", "fetch, import and build in one step: yesterday's files into a new snapshot", runUpdate},
		{"version", "print the version and build information (also --version)", runVersion},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "pregao:", err)
		}
		os.Exit(2)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(stdout)
		return nil
	}
	if args[0] == "--version" || args[0] == "-version" {
		return runVersion(ctx, args[1:], stdout, stderr)
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(ctx, args[1:], stdout, stderr)
		}
	}
	usage(stderr)
	return fmt.Errorf("unknown command %q", args[0])
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: pregao <command> [flags]\n\ncommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun 'pregao <command> -h' for a command's flags.")
}
