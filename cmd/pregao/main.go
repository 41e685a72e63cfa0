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
// ctx ends on SIGINT or SIGTERM: every command stops then, its outputs
// left as they were (see untilDone), and exits with status 2.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
	// drains is set for serve, which shuts down on SIGTERM and takes
	// every later signal as part of that. For every other command a
	// second signal ends the process at once, the default way.
	drains bool
}

func commands() []command {
	return []command{
		{"serve", "serve the HTTP API from a snapshot", runServe, true},
		{"feed", "run a live feed alone, publishing to the live stream of a NATS cluster", runFeedCmd, false},
		{"generate", "write the deterministic demo universe as a source bundle", runGenerate, false},
		{"build", "validate a source bundle and write a snapshot", runBuild, false},
		{"export", "write a snapshot's datasets as Parquet and CSV files", runExport, false},
		{"inspect", "print a snapshot's header and entity counts", runInspect, false},
		{"verify", "check a whole snapshot as the server's loader does", runVerify, false},
		{"keys", "manage API keys (keys add --name N --plan delayed|eod)", runKeys, false},
		{"import", "turn official B3/CVM files into a source bundle", runImport, false},
		{"fetch", "download official B3/CVM files into a folder", runFetch, false},
		{"update", "fetch, import and build in one step: yesterday's files into a new snapshot", runUpdate, false},
		{"healthcheck", "exit 0 when a running server is ready (/readyz answers 200), 1 otherwise", runHealthcheck, false},
		{"version", "print the version and build information (also --version)", runVersion, false},
	}
}

func main() {
	os.Exit(mainStatus(os.Args[1:], os.Stdout, os.Stderr))
}

// mainStatus runs the command of args as main does and returns the exit
// status: 0 (also for -h, which prints the usage), a command's own
// (exitStatus: healthcheck's 1), or 2 after printing the error. SIGINT and SIGTERM end the
// command's context; for commands but serve, the first signal also
// gives the signals back to their default (ending the process), so that
// a second one ends a command that does not stop.
func mainStatus(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if !drains(args) {
		go func() {
			<-ctx.Done()
			stop()
		}()
	}
	if err := run(ctx, args, stdout, stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0 // -h: the usage was asked for and printed
		}
		fmt.Fprintln(stderr, "pregao:", err)
		if es := (*exitStatus)(nil); errors.As(err, &es) {
			return es.status
		}
		return 2
	}
	return 0
}

// drains reports whether the command of args handles every signal itself
// (serve).
func drains(args []string) bool {
	for _, c := range commands() {
		if len(args) > 0 && c.name == args[0] {
			return c.drains
		}
	}
	return false
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
		fmt.Fprintf(w, "  %-11s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun 'pregao <command> -h' for a command's flags.")
}
