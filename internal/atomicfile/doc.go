// Package atomicfile names, cleans up and swaps in the temporary files and
// folders through which snapshots, bundles and the keys file are replaced
// atomically, and takes the advisory file lock (Lock) that makes
// concurrent writers of one file or folder take turns.
//
// A temporary entry for path P is named ".BASE.tmp-PID-RANDOM" beside P
// (BASE is P's base name, PID the writing process). A writer killed with
// SIGKILL cannot remove its own temporary entry; RemoveStale, called by the
// next writer of the same path, removes the entries whose process is gone,
// and never those of a live concurrent writer.
//
// It imports only the standard library and golang.org/x/sys; it must not
// import any package of this module.
package atomicfile
