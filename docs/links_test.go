// Package docs holds the user documentation; its test checks that the
// documents' links and images point at files that exist.
package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// mdLink matches a Markdown link or image target: ](target) or
// ](target "title").
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)

// Every relative link and image of README.md and docs/*.md names a file or
// directory of the repository (a study's chart that a regeneration deleted
// had left docs/emulated.md showing nothing).
func TestLinksResolve(t *testing.T) {
	docs, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	docs = append(docs, filepath.Join("..", "README.md"))
	checked := 0
	for _, doc := range docs {
		text, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(text), "\n") {
			for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") || strings.HasPrefix(target, "#") {
					continue
				}
				target, _, _ = strings.Cut(target, "#")
				path := filepath.Join(filepath.Dir(doc), filepath.FromSlash(target))
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s:%d: link to %s: no such file", doc, i+1, m[1])
				}
				checked++
			}
		}
	}
	if checked < 50 {
		t.Errorf("only %d links checked: the pattern no longer finds them", checked)
	}
}

// fuzzerCount matches README's count of fuzz targets ("has a fuzzer (18:").
var fuzzerCount = regexp.MustCompile(`has a fuzzer \((\d+):`)

// README's count of fuzz targets is the number of Fuzz functions in the
// repository's tests (it said 17 after an 18th was added).
func TestReadmeFuzzerCount(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := fuzzerCount.FindSubmatch(readme)
	if m == nil {
		t.Fatal(`README.md no longer says "has a fuzzer (N:": update this test`)
	}
	fuzzFunc := regexp.MustCompile(`(?m)^func Fuzz\w+\(`)
	n := 0
	err = filepath.WalkDir("..", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != ".." {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, "_test.go") {
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			n += len(fuzzFunc.FindAll(src, -1))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if string(m[1]) != strconv.Itoa(n) {
		t.Errorf("README.md says %s fuzzers; the tests define %d", m[1], n)
	}
}
