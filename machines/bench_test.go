package machines

import "testing"

// BenchmarkLoadBytes measures loading and validating an embedded machine file.
func BenchmarkLoadBytes(b *testing.B) {
	src, _ := Source("ascend-910a")
	for b.Loop() {
		if _, err := LoadBytes("ascend-910a.yaml", src, nil); err != nil {
			b.Fatal(err)
		}
	}
}
