package programs

import (
	"os"
	"strings"
	"testing"
)

// docs/formats.md holds FormatsReference between its markers: a key added
// to a program or machine kind must be documented there (regenerate the
// block with `davinci-sim formats`).
func TestFormatsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/formats.md")
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- generated: davinci-sim formats -->\n", "<!-- end generated -->"
	s := string(doc)
	i, j := strings.Index(s, begin), strings.Index(s, end)
	if i < 0 || j < i {
		t.Fatalf("docs/formats.md lacks the generated markers")
	}
	if got, want := s[i+len(begin):j], FormatsReference(); got != want {
		t.Errorf("docs/formats.md's key reference is out of date: regenerate it with `davinci-sim formats` between the markers")
	}
	for _, k := range Kinds() {
		if k.Params == nil {
			t.Errorf("program kind %s has no Params type: its keys cannot be documented", k.Name)
		}
	}
}
