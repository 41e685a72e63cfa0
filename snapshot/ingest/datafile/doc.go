// Package datafile opens the official data files the importers read:
// plain, zstd-compressed (.zst) or gzip-compressed (.gz) files are read
// the same way, and text in ISO-8859-1 or UTF-8 becomes UTF-8. It holds
// the check every reader of the official text files makes on its fields
// (NULField, ErrNUL), and locates the project's testdata/real folder for
// tests.
//
// It imports only the standard library and klauspost/compress; it must not
// import engine, snapshot or any importer.
package datafile
