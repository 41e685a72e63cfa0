//go:build !unix

package bench

import "os/exec"

// lowestPriority does nothing where there is no nice.
func lowestPriority() error { return nil }

// ownSession does nothing where there are no sessions.
func ownSession(*exec.Cmd) {}

// groupPriority does nothing where there are no scheduling groups.
func groupPriority(int) error { return nil }

// sessionLeader reports false where there are no sessions.
func sessionLeader() bool { return false }

// newSession does nothing where there are no sessions.
func newSession() error { return nil }
