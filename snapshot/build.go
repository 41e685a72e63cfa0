package snapshot

import (
	"fmt"

	"github.com/pregao/pregao/engine/ratios"
	"github.com/pregao/pregao/snapshot/bundle"
)

// BuildFromBundle reads and validates the source bundle in dir, derives
// the ratio catalog and points, and writes the snapshot to out atomically.
// A bad bundle returns the validation error and leaves out untouched.
func BuildFromBundle(dir, out string, opt WriteOptions) (Header, error) {
	u, err := bundle.Read(dir)
	if err != nil {
		return Header{}, err
	}
	d, err := ratios.Derive(u)
	if err != nil {
		return Header{}, fmt.Errorf("derive ratios: %w", err)
	}
	u.Derived = d
	enc, err := encode(u, opt)
	if err != nil {
		return Header{}, err
	}
	if err := writeEncoded(out, enc); err != nil {
		return Header{}, err
	}
	return enc.h, nil
}
