package main

import (
	"context"
	"fmt"
	"io"
	"time"
)

// stopGrace is how long a command whose context ended (SIGINT, SIGTERM)
// waits for its work to notice, remove its temporary files and return,
// before it returns anyway: the longest step that does not watch the
// context (reading a bundle, the load that checks a snapshot before it
// is renamed into place) is not waited for longer. Outputs are renamed
// into place whole, so what is left behind then is at most a temporary
// file, which the next run of the command removes. A second signal ends
// the process at once (main).
const stopGrace = 3 * time.Second

// interrupted returns the error of a command stopped by the end of ctx:
// it names the command, the cause (the signal) and the state of its
// output (what).
func interrupted(ctx context.Context, name, what string) error {
	return fmt.Errorf("%s: interrupted (%v): %s", name, context.Cause(ctx), what)
}

// untilDone runs work on a goroutine of its own and returns its error.
// When ctx ends first it says so on stderr, waits up to grace for work to
// return, and returns interrupted(ctx, name, what), or nil when work
// completed meanwhile. work must watch ctx itself to stop early; what it
// leaves (its goroutine, when it does not return within grace) is the
// process's to end.
func untilDone(ctx context.Context, name, what string, grace time.Duration, stderr io.Writer, work func(context.Context) error) error {
	done := make(chan error, 1)
	go func() { done <- work(ctx) }()
	select {
	case err := <-done:
		if err != nil && ctx.Err() != nil {
			return interrupted(ctx, name, what)
		}
		return err
	case <-ctx.Done():
	}
	if grace > 0 {
		fmt.Fprintf(stderr, "%s: stopping (%v; a second signal ends it at once)\n", name, context.Cause(ctx))
		t := time.NewTimer(grace)
		defer t.Stop()
		select {
		case err := <-done:
			if err == nil {
				return nil
			}
		case <-t.C:
		}
	}
	return interrupted(ctx, name, what)
}
