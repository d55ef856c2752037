package programs

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/davinci-sim/davinci-sim/badinput"
	"github.com/davinci-sim/davinci-sim/isa"
)

// isa.MaxStreamInstrs bounds the streams of all an asm program's cores
// together, before the run: cores: 32 with repeat 2^26 { nop } passed a
// bound counted per core and ran for 4 minutes. Two cores of half the
// bound and one more instruction each are refused, naming the cores, with
// one stream file per core as well.
func TestAsmStreamBoundAllCores(t *testing.T) {
	body := fmt.Sprintf("repeat %d {\n  nop\n}\n", isa.MaxStreamInstrs/2+1)
	inline := "asm: |\n  " + strings.ReplaceAll(strings.TrimSuffix(body, "\n"), "\n", "\n  ") + "\n"
	for _, c := range []struct{ name, src string }{
		{"cores 32", "kind: asm\ncores: 32\n" + inline},
		{"streams", "kind: asm\nnumerics: off\nstreams: [a.s, a.s]\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := asmFiles(t, c.src, map[string]string{"a.s": body})
			start := time.Now()
			// (Bounded per core, the run took minutes: the deadline makes
			// that a failure of its own.)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_, err := Execute(f, Options{}, RunHooks{Context: ctx})
			want := fmt.Sprintf("the streams of cores 0…1 are longer than %d instructions together (repeat counts multiply; one bound for all the cores' streams) (core=1)", isa.MaxStreamInstrs)
			if err == nil || !badinput.Is(err) || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("got %v, want one line of bad input containing %q", err, want)
			}
			t.Logf("refused in %v: %v", time.Since(start).Round(time.Millisecond), err)
		})
	}
}
