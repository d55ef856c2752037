package programs

import (
	"testing"
)

// FuzzProgramFile feeds arbitrary YAML to the program parser and the kinds'
// parameter decoding and validation (timing only, so nothing large is
// allocated): it must never panic, only return errors.
func FuzzProgramFile(f *testing.F) {
	for _, name := range []string{"sgemm-cube.yaml", "hgemm.yaml", "deadlock.yaml"} {
		b, err := Examples.ReadFile("examples/" + name)
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
		// Walk a bounded prefix of core 0's stream.
		p := job.Program()
		if len(p.Cores) == 0 || p.Cores[0] == nil {
			return
		}
		n := 0
		for range p.Cores[0] {
			if n++; n > 2000 {
				break
			}
		}
	})
}
