//go:build !unix

package bench

// lowestPriority does nothing where there is no nice.
func lowestPriority() error { return nil }
