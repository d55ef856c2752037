package programs

import (
	"io/fs"
	"testing"

	"github.com/davinci-sim/davinci-sim/isa"
)

// FuzzProgramFile feeds arbitrary YAML to the program parser and the kinds'
// parameter decoding and validation (timing only, so nothing large is
// allocated), and walks the start of the streams they generate — a core's,
// or a grid's first and last block's: it must never panic, only return
// errors. Seeds: every example program (each kind, on DaVinci and GPUs).
func FuzzProgramFile(f *testing.F) {
	names, err := fs.Glob(Examples, "examples/*.yaml")
	if err != nil || len(names) == 0 {
		f.Fatal("no examples", err)
	}
	for _, name := range names {
		b, err := Examples.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("kind: sgemm-cube\nm: -1\n"))
	f.Add([]byte("kind: asm\nasm: \"repeat 3 i {\\n scalar cycles=i\\n}\\n\"\ncores: 2\n"))
	f.Add([]byte("kind: hgemm\ntiling: {bm: 0}\n"))
	f.Add([]byte("kind: [\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Parse("fuzz.yaml", ".", data)
		if err != nil {
			return
		}
		m, err := MachineFor(file, Options{})
		if err != nil {
			return
		}
		job, err := file.Kind.Build(file, m, Options{Numerics: NumericsOff})
		if err != nil {
			return
		}
		// Walk a bounded prefix of core 0's stream and of the first and
		// last block of each grid (asking their classes).
		p := job.Program()
		walk := func(s isa.Stream) {
			n := 0
			for range s {
				if n++; n > 2000 {
					break
				}
			}
		}
		if len(p.Cores) > 0 && p.Cores[0] != nil {
			walk(p.Cores[0])
		}
		for _, g := range p.Grids {
			for _, i := range []int{0, g.CTAs - 1} {
				if i < 0 {
					continue
				}
				if g.Class != nil {
					g.Class(i)
				}
				walk(g.CTA(i))
			}
		}
	})
}
