package index

// Integer is the set of sorted-column element types the search helpers
// accept: day numbers (int32-based dates) and unix times (int64).
type Integer interface {
	~int32 | ~int64 | ~int
}

// FirstGE returns the index of the first element of the ascending slice s
// that is >= v, or len(s) when none is. It does not allocate.
func FirstGE[T Integer](s []T, v T) int {
	lo, hi := 0, len(s)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if s[m] < v {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// FirstGT returns the index of the first element of the ascending slice s
// that is > v, or len(s) when none is.
func FirstGT[T Integer](s []T, v T) int {
	lo, hi := 0, len(s)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if s[m] <= v {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// LastLE returns the index of the last element of the ascending slice s
// that is <= v, or -1 when none is.
func LastLE[T Integer](s []T, v T) int { return FirstGT(s, v) - 1 }

// LastLT returns the index of the last element of the ascending slice s
// that is < v, or -1 when none is.
func LastLT[T Integer](s []T, v T) int { return FirstGE(s, v) - 1 }

// Span returns the half-open row range [lo, hi) of the ascending slice s
// whose elements lie in the closed interval [from, to]. lo == hi when the
// interval holds none (including from > to).
func Span[T Integer](s []T, from, to T) (lo, hi int) {
	if from > to {
		return 0, 0
	}
	lo = FirstGE(s, from)
	hi = FirstGT(s, to)
	if hi < lo {
		hi = lo
	}
	return lo, hi
}

// IsSorted reports whether s is strictly ascending (no duplicates).
func IsSorted[T Integer](s []T) bool {
	for i := 1; i < len(s); i++ {
		if s[i] <= s[i-1] {
			return false
		}
	}
	return true
}
