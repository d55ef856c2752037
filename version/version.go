// Package version names the davinci-sim build that produced a result: the
// release it belongs to and, when the toolchain recorded it, the source
// revision. report.json carries it (key "version") and `davinci-sim
// --version` prints it, so a result can be traced to the code that made it
// even when the binary was built without VCS stamping
// (GOFLAGS=-buildvcs=false) or outside a git checkout.
package version

import (
	"runtime/debug"
	"strings"
	"sync"
)

// Release is the release this source tree belongs to (semantic versioning).
// Bump it with every tagged release; between releases, builds report
// Release plus the revision, or Release+"-dev" when no revision is known.
const Release = "0.9.0"

// Stamp, when not empty, is the version string of this build, set by the
// linker: go build -ldflags "-X github.com/davinci-sim/davinci-sim/version.Stamp=v0.9.0-12-gabc1234"
// (e.g. from `git describe --tags --dirty`). It overrides everything else.
var Stamp = ""

var (
	once   sync.Once
	cached string
)

// String returns the version of this build: Stamp when set; else Release
// with the VCS revision the Go toolchain recorded ("0.9.0+abc123def456",
// "+dirty" appended for modified trees); else the module version when the
// binary was built by `go install module@version`; else Release+"-dev".
func String() string {
	once.Do(func() { cached = compute(Stamp, readBuildInfo()) })
	return cached
}

func readBuildInfo() *debug.BuildInfo {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return nil
	}
	return bi
}

// compute is String for a given stamp and build information (nil when the
// binary has none).
func compute(stamp string, bi *debug.BuildInfo) string {
	if stamp != "" {
		return stamp
	}
	if bi == nil {
		return Release + "-dev"
	}
	var rev string
	var dirty bool
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		v := Release + "+" + rev
		if dirty {
			v += ".dirty"
		}
		return v
	}
	if mv := bi.Main.Version; mv != "" && mv != "(devel)" {
		return strings.TrimPrefix(mv, "v") // a release or a pseudo-version naming the commit
	}
	return Release + "-dev"
}
