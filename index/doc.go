// Package index holds the generic, read-optimized ordered structures the
// engine builds once per snapshot and then only reads: an immutable
// string-keyed ordered map on github.com/tidwall/btree (with a hash table
// for point lookups) and binary-search helpers over sorted integer
// columns (dates, unix times).
//
// Structures are built in one pass from presorted input and are never
// modified afterwards, so every read method is safe for concurrent use
// without locks. Point lookups (Map.Get) and date searches do not allocate.
//
// index knows no domain types: it imports only the standard library and
// github.com/tidwall/btree, and must never import engine or any other
// package of this module.
package index
