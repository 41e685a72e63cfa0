// Package atomicfile replaces files and folders atomically, names and
// cleans up the temporary entries through which it does so, and takes the
// advisory file lock (Lock) that makes concurrent writers of one file or
// folder take turns.
//
// Every file the module replaces in place goes through File (Create,
// Commit, Abort) or WriteFile, its one-call form: a temporary file in the
// same folder, written, synced, renamed over the target, and the folder
// synced, so that a reader or a crash sees the old content or the new,
// never a part. A folder is replaced whole by SwapDir.
//
// A temporary entry for path P is named ".BASE.tmp-PID-RANDOM" beside P
// (TempPattern; BASE is P's base name, PID the writing process). A writer
// killed with SIGKILL cannot remove its own temporary entry; RemoveStale,
// called by the next writer of the same path (Create calls it), removes
// the entries whose process is gone, and never those of a live concurrent
// writer.
//
// It imports only the standard library and golang.org/x/sys; it must not
// import any package of this module.
package atomicfile
