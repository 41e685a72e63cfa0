package engine

import (
	"sync/atomic"
	"unsafe"
)

// Blocks verifies, on first use, the bytes a Dataset's bars and ratio
// points are read from in place (a mapped snapshot of format 6, whose
// columns are cut into blocks with a checksum each): a block is verified
// once, the first time a request reads it or when a background pass
// reaches it. Ratio points are no ticker's: All verifies their blocks.
// Implementations are safe for concurrent use.
type Blocks interface {
	// Ticker verifies the blocks holding the daily and 1-minute bars
	// given for ticker t (nil: none given, or all good).
	Ticker(t string) error
	// Company verifies the blocks holding the ratio points of company id
	// (a fund's: its fund ratio points; nil: none given, or all good).
	Company(id string) error
	// All verifies every block not yet verified.
	All() error
	// Err returns the error of the first bad block found so far (nil
	// while none is): one atomic load.
	Err() error
	// Status reports the blocks verified and found bad so far.
	Status() BlockStatus
}

// BlockStatus is how far the verification of a Dataset's blocks is.
type BlockStatus struct {
	Blocks   int64 // blocks in all
	Bytes    int64 // their bytes
	Verified int64 // blocks verified, good or bad
	Bad      int64 // blocks whose bytes do not match their checksum
	// Err describes the first bad block found (nil while none is).
	Err error
}

// Complete reports whether every block is verified.
func (s BlockStatus) Complete() bool { return s.Verified == s.Blocks }

// blockState is a Dataset's Blocks and what is known of each asset.
type blockState struct {
	b       Blocks
	checked []atomic.Bool // per asset (Pos): its blocks verified good
	issuers []atomic.Bool // per issuer (its place in Issuers): its ratio blocks verified good
}

// SetBlocks makes d verify its bars' blocks on first use with b (a
// snapshot loader calls it before the Dataset is published; nil: the
// bars are verified already).
func (d *Dataset) SetBlocks(b Blocks) {
	if b == nil {
		d.blocks = nil
		return
	}
	d.blocks = &blockState{b: b, checked: make([]atomic.Bool, len(d.assets)), issuers: make([]atomic.Bool, len(d.issuers))}
}

// Blocks returns what SetBlocks set (nil: nothing to verify).
func (d *Dataset) Blocks() Blocks {
	if d.blocks == nil {
		return nil
	}
	return d.blocks.b
}

// CheckAsset verifies, once, the blocks a's bars were read from: its own
// ticker's and those of the tickers renamed into it (Former). It returns
// the error of a bad block (the request that reads a must not answer),
// nil when they are good or d has nothing to verify. A verified asset
// costs one atomic load.
func (d *Dataset) CheckAsset(a *Asset) error {
	bs := d.blocks
	if bs == nil || a == nil {
		return nil
	}
	p := int(a.pos)
	if p < 0 || p >= len(bs.checked) || &d.assets[p] != a {
		return nil // not one of d's assets (a live session's)
	}
	if bs.checked[p].Load() {
		return nil
	}
	if err := bs.b.Ticker(a.Ticker); err != nil {
		return err
	}
	for _, t := range a.Former {
		if err := bs.b.Ticker(t); err != nil {
			return err
		}
	}
	bs.checked[p].Store(true)
	return nil
}

// CheckIssuer verifies, once, the blocks is's ratio points (a fund's:
// its fund ratio points) are read from (before Issuer.Ratios or
// Issuer.FundRatios reads them), as CheckAsset does for an asset's bars.
func (d *Dataset) CheckIssuer(is *Issuer) error {
	bs := d.blocks
	if bs == nil || is == nil || len(d.issuers) == 0 {
		return nil
	}
	p := int((uintptr(unsafe.Pointer(is)) - uintptr(unsafe.Pointer(&d.issuers[0]))) / unsafe.Sizeof(*is))
	if p < 0 || p >= len(bs.issuers) || &d.issuers[p] != is {
		return nil // not one of d's issuers
	}
	if bs.issuers[p].Load() {
		return nil
	}
	if err := bs.b.Company(is.ID); err != nil {
		return err
	}
	bs.issuers[p].Store(true)
	return nil
}

// CheckAll verifies every block of d not yet verified (once they all
// are, it costs a call), and returns the error of the first bad block
// known, nil when they are all good or d has nothing to verify.
func (d *Dataset) CheckAll() error {
	bs := d.blocks
	if bs == nil {
		return nil
	}
	return bs.b.All()
}

// BlockErr returns the error of the first bad block found in d so far
// (by a request or the background pass), or of Fail, nil while none is:
// a Dataset with a bad block answers no request.
func (d *Dataset) BlockErr() error {
	if p := d.fault.Load(); p != nil {
		return *p
	}
	bs := d.blocks
	if bs == nil {
		return nil
	}
	return bs.b.Err()
}

// Fail marks d as unusable from now on: BlockErr returns err (the first
// one given is kept). A server calls it when a read of d's mapped file
// faulted (the file was truncated or changed in place under the
// mapping): no answer is made from d again.
func (d *Dataset) Fail(err error) {
	d.fault.CompareAndSwap(nil, &err)
}
