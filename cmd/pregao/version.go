package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pregao/pregao/snapshot"
)

// version is the version, stamped at link time by `make build` and
// `make dist` (the Makefile's VERSION: the release of the tree and the
// commits since):
//
//	go build -ldflags "-X main.version=v0.1.0-98-g4f16615"
//
// Left empty, the version comes from the build info or the tree's
// release (see readBuild).
var version string

// revision is the VCS revision, stamped at link time like version
// (-X main.revision=$(git rev-parse HEAD)). The go command records the
// revision itself (vcs.revision) only when it finds the repository: not
// in a git worktree, not with -buildvcs=false, not in a container build
// without .git. The recorded one wins when both exist.
var revision string

// buildInfo describes the running binary. Fields that the build did not
// record are empty.
type buildInfo struct {
	Version       string // stamped version, else the module version of a release, else the tree's release (treeVersion)
	Module        string // main module path
	ModuleVersion string // main module version from the build info: "(devel)", a tag or a pseudo-version
	Revision      string // VCS revision (commit hash)
	Time          string // VCS commit time, RFC 3339
	Modified      string // "true" if the working tree had uncommitted changes, "false", or "" when unknown
	GoVersion     string // Go toolchain that built the binary, e.g. go1.26.8
	Platform      string // GOOS/GOARCH
}

// readBuild combines the stamped version and revision with the build info
// bi (nil when the binary has none). The version is the stamped one if
// set; otherwise the main module's version when it names a release (go
// install module@version, or the pseudo-version Go 1.24 and later derive
// from a tag, v0.1.1-0.DATE-COMMIT); otherwise the tree's release with
// the revision as build metadata (treeVersion). The revision is the
// recorded one, else the stamped one.
func readBuild(stampedVersion, stampedRevision string, bi *debug.BuildInfo) buildInfo {
	b := buildInfo{Version: semanticVersion(stampedVersion), GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi != nil {
		b.Module, b.ModuleVersion = bi.Main.Path, bi.Main.Version
		if bi.GoVersion != "" {
			b.GoVersion = bi.GoVersion
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				b.Revision = s.Value
			case "vcs.time":
				b.Time = s.Value
			case "vcs.modified":
				b.Modified = s.Value
			}
		}
	}
	if b.Revision == "" {
		b.Revision = stampedRevision
	}
	if b.Version == "" && b.ModuleVersion != "" && b.ModuleVersion != "(devel)" && !strings.HasPrefix(b.ModuleVersion, "v0.0.0-") {
		b.Version = b.ModuleVersion
	}
	if b.Version == "" {
		b.Version = treeVersion(b.Revision, b.Modified == "true")
	}
	return b
}

// treeVersion is the version of a build that nothing stamped and no tag
// names (a clone without tags, a container build without .git): the
// tree's release, with the revision's first 12 digits as build metadata
// (v0.1.0+4f16615c3488, .dirty when modified), or +devel without one. It
// names the release the build comes from, not how far past it.
func treeVersion(revision string, modified bool) string {
	meta := "devel"
	if len(revision) >= 12 {
		meta = revision[:12]
	} else if revision != "" {
		meta = revision
	}
	if modified {
		meta += ".dirty"
	}
	return release + "+" + semverMeta(meta)
}

// semverRE matches a semantic version with Go's leading v: vMAJOR.MINOR.PATCH,
// then an optional pre-release and build metadata (semver.org 2.0.0).
var semverRE = regexp.MustCompile(`^v(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$`)

// semanticVersion returns the stamped version v as a semantic version:
// v itself when it is one (a release, v0.1.0, or past it,
// v0.1.0-3-gddf5ca1-dirty); anything else (a bare commit, ddf5ca1, as git
// describe gives without a tag) as build metadata of the tree's release,
// v0.1.0+ddf5ca1; "" as "".
func semanticVersion(v string) string {
	if v == "" || semverRE.MatchString(v) {
		return v
	}
	return release + "+" + semverMeta(strings.TrimPrefix(v, "v"))
}

// semverMeta returns s as semantic-version build metadata: characters
// other than letters, digits, "-" and "." as "-", no "." at either end.
func semverMeta(s string) string {
	meta := strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '-' || r == '.' {
			return r
		}
		return '-'
	}, s)
	return strings.Trim(meta, ".")
}

// currentBuild returns the running binary's buildInfo, read once.
var currentBuild = sync.OnceValue(func() buildInfo {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = nil
	}
	return readBuild(version, revision, bi)
})

// orUnknown returns s, or "unknown" when s is empty.
func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// writeVersion writes b as "pregao VERSION" and one indented line per
// field.
func writeVersion(w io.Writer, b buildInfo) {
	fmt.Fprintf(w, "pregao %s\n", b.Version)
	mod := b.Module
	if b.ModuleVersion != "" {
		mod += " " + b.ModuleVersion
	}
	fmt.Fprintf(w, "  module:    %s\n", orUnknown(mod))
	fmt.Fprintf(w, "  revision:  %s\n", orUnknown(b.Revision))
	fmt.Fprintf(w, "  time:      %s\n", orUnknown(b.Time))
	fmt.Fprintf(w, "  modified:  %s\n", orUnknown(b.Modified))
	fmt.Fprintf(w, "  go:        %s %s\n", b.GoVersion, b.Platform)
	fmt.Fprintf(w, "  snapshots: writes format %d, reads %d to %d\n", defaultFormat, snapshot.MinReadVersion, snapshot.MaxReadVersion)
}

// runVersion implements "pregao version [-short]" (also "pregao
// --version"): the version and what the build recorded about itself.
func runVersion(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	fs.SetOutput(stderr)
	short := fs.Bool("short", false, "print only the version")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("version: unexpected argument %q", fs.Arg(0))
	}
	b := currentBuild()
	if *short {
		fmt.Fprintln(stdout, b.Version)
		return nil
	}
	writeVersion(stdout, b)
	return nil
}

// registerBuildInfo registers the gauge pregao_build_info{version,
// revision,goversion} = 1 on reg, the way Prometheus and its exporters
// expose their builds.
func registerBuildInfo(reg prometheus.Registerer, b buildInfo) {
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "pregao_build_info",
		Help: "The running binary's build (value 1): version, VCS revision and Go version in the labels.",
		ConstLabels: prometheus.Labels{
			"version":   b.Version,
			"revision":  b.Revision,
			"goversion": b.GoVersion,
		},
	})
	g.Set(1)
	reg.MustRegister(g)
}
