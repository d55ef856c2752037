package version

import (
	"os"
	"regexp"
	"testing"
)

// CITATION.cff cites the current release.
func TestCitationVersion(t *testing.T) {
	b, err := os.ReadFile("../CITATION.cff")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^version: "([^"]*)"`).FindSubmatch(b)
	if m == nil || string(m[1]) != Release {
		t.Errorf("CITATION.cff version %q, want Release %q", m, Release)
	}
}
