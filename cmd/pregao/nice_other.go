//go:build !linux

package main

// lowerThreadPriority is not available on this system.
func lowerThreadPriority() error { return nil }

func threadNice() (int, error) { return 0, nil }
