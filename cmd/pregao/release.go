package main

// release is the release this tree is, or comes after: the version of
// CHANGELOG.md's newest release section, which `make release
// RELEASE=vX.Y.Z` sets in the commit it tags. Tags do not travel with
// every copy of the repository (a clone without them, an archive, a
// container build without .git); this does. make build stamps the
// version it derives from it (the release, then the commits since its
// commit, see the Makefile's VERSION), and a build nothing stamped
// reports it (treeVersion).
const release = "v0.1.0"
