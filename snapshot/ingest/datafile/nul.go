package datafile

import "errors"

// ErrNUL is wrapped by the error of a field of a text file that holds a
// NUL byte (0x00). No official text file (B3's and the CVM's CSV tables)
// holds one: the file is damaged or is not text, and a NUL kept in a name
// or code would travel into the bundle and the API's answers. The
// readers of the official CSV files (cvm.Reader, b3.ReadIndexCSV,
// b3.ReadListings) refuse such a field, naming file, line and column.
var ErrNUL = errors.New("NUL byte (0x00) in the field: a damaged file, or not a text file")

// NULField returns the index of the first of fields that holds a NUL
// byte, or -1 when none does. It does not allocate.
func NULField[T ~string | ~[]byte](fields []T) int {
	for i, f := range fields {
		for j := 0; j < len(f); j++ {
			if f[j] == 0 {
				return i
			}
		}
	}
	return -1
}
