package engine

import "errors"

// Sentinel errors. Callers wrap them with context
// (fmt.Errorf("company %q: %w", id, ErrNotFound)) and test with errors.Is;
// the HTTP layer maps ErrNotFound to 404 and ErrInvalid to 400.
var (
	// ErrNotFound reports an identifier, index, fund or row that the
	// Dataset does not hold.
	ErrNotFound = errors.New("not found")
	// ErrInvalid reports malformed input: a bad identifier or parameter at
	// query time, or a Universe that breaks an invariant at Build.
	ErrInvalid = errors.New("invalid")
)
