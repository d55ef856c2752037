package machines

import (
	"bytes"
	"io/fs"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/viper"
)

// viperRead is what ReadYAML gave viper before it decoded the parsed
// document itself: the text read again by viper.
func viperRead(t *testing.T, data []byte) map[string]any {
	t.Helper()
	v := viper.New()
	v.SetConfigType("yaml")
	if err := v.ReadConfig(bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	return v.AllSettings()
}

// TestReadYAMLAsViperReads: the values ReadYAML decodes from the parsed
// document are those viper read from the text — for every embedded
// machine and cluster file, and for hand-made files with anchors, lists
// of mappings, mixed-case keys and every scalar type.
func TestReadYAMLAsViperReads(t *testing.T) {
	texts := map[string][]byte{
		"anchors": []byte("Base: &b {Clock: 1.5GHz, Cores: 30}\nother: *b\nlist:\n  - {Name: a, scale: 2^11}\n  - [1, 2.5, true, ~x, 0x1f]\nMixedCase: {Inner: {Deep: yes}}\n"),
		"scalars": []byte("i: 12\nf: 1.5e3\nb: false\ns: \"012\"\nt: 2026-12-02\nneg: -7\nbig: 123456789012345678901\n"),
	}
	err := fs.WalkDir(files, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".yaml") {
			return err
		}
		data, err := files.ReadFile(p)
		texts[p] = data
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(texts) < 15 {
		t.Fatalf("only %d files read: the embedded machines were not found", len(texts))
	}
	for name, data := range texts {
		c, err := ReadYAML(filepath.Base(name), data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got, want := c.Viper().AllSettings(), viperRead(t, data); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: ReadYAML's values differ from viper's reading of the text:\n got %v\nwant %v", name, got, want)
		}
	}
}

// TestFreshDropsOverrides: Fresh gives the file's values back without an
// override applied since, its keys' lines kept, from the parsed document
// alone.
func TestFreshDropsOverrides(t *testing.T) {
	type target struct {
		Cores int    `mapstructure:"cores"`
		Name  string `mapstructure:"name"`
	}
	c, err := ReadYAML("m.yaml", []byte("name: x\n\ncores: 30\n"))
	if err != nil {
		t.Fatal(err)
	}
	ovs, err := ParseOverrides([]string{"cores=8"})
	if err != nil {
		t.Fatal(err)
	}
	if err := ApplyOverrides(c, &target{}, "", ovs); err != nil {
		t.Fatal(err)
	}
	if got := c.Viper().GetInt("cores"); got != 8 {
		t.Fatalf("the override did not apply: cores %d", got)
	}
	f, err := c.Fresh()
	if err != nil {
		t.Fatal(err)
	}
	var got target
	if err := DecodeStrict(f, &got); err != nil {
		t.Fatal(err)
	}
	if got != (target{Cores: 30, Name: "x"}) {
		t.Errorf("Fresh decodes %+v, want the file's {30 x}", got)
	}
	if l := f.Line("cores"); l != 3 {
		t.Errorf("Fresh: cores on line %d, want 3", l)
	}
	if _, err := (&Config{Source: "empty", v: viper.New()}).Fresh(); err != nil {
		t.Errorf("an empty file's Fresh: %v", err)
	}
}
