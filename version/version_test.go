package version

import (
	"runtime/debug"
	"testing"
)

func TestCompute(t *testing.T) {
	vcs := &debug.BuildInfo{Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.modified", Value: "true"}}}
	cases := []struct {
		name  string
		stamp string
		bi    *debug.BuildInfo
		want  string
	}{
		{"stamp wins", "v1.2.3-4-gabc", vcs, "v1.2.3-4-gabc"},
		{"no build info", "", nil, Release + "-dev"},
		{"vcs", "", vcs, Release + "+0123456789ab.dirty"},
		{"buildvcs=false", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, Release + "-dev"},
		{"go install @version", "", &debug.BuildInfo{Main: debug.Module{Version: "v0.9.1"}}, "0.9.1"},
		{"pseudo-version", "", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20250101-abcdef"}}, "0.0.0-20250101-abcdef"},
	}
	for _, c := range cases {
		if got := compute(c.stamp, c.bi); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
	if String() == "" {
		t.Error("String() is empty")
	}
}
