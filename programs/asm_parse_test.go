package programs

import (
	"cmp"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/badinput"
	"github.com/davinci-sim/davinci-sim/isa"
)

// The parsed assembly counts against the run's bound on its host memory,
// with either numerics: before each source is parsed, its
// isa.ParseHostBytes — with the sources' before it and the run's own
// 48 MiB — must stay within the bound, else its key is refused (one line,
// bad input of host memory); with numerics full it is part of the run's
// own memory beside the data; the sweep's estimate (HostBytes) counts it
// as the run does, and the refusal quotes that whole estimate (with the
// chip model: 7 MiB timing, 59 MiB functional). 2^18 nop lines held 0.8 GB whatever
// --max-memory said, and one file per core as many times over.
func TestAsmParseHostMemory(t *testing.T) {
	const defaultBound = 64 << 20 // 16 MiB beside the run's own
	nops := func(n int) string { return strings.Repeat("nop\n", n) }
	inline := func(n int) string { return "asm: |\n" + strings.Repeat("  nop\n", n) }
	for _, c := range []struct {
		name, rest string
		files      map[string]string
		want       string // "" = accepted
		full       string // with numerics full, if not want
		bound      int64  // 0: defaultBound
	}{
		{"a file within", "file: a.s\n", map[string]string{"a.s": nops(6000)}, "", "", 0},
		{"a file past", "file: a.s\n", map[string]string{"a.s": nops(9000)},
			`key "file": the assembly's 9000 lines and 36000 bytes would take up to 21 MiB to parse (~2 KiB a line, 96 bytes a byte of code, beside the run's own 48 MiB): about 77MiB of host memory in all (its data 21MiB, its chip model 7MiB and the run's base 48MiB), more than the run may take (64MiB, --max-memory)`,
			`key "file": the assembly's 9000 lines and 36000 bytes would take up to 21 MiB to parse (~2 KiB a line, 96 bytes a byte of code, beside the run's own 48 MiB): about 129MiB of host memory in all (its data 21MiB, its chip model 59MiB and the run's base 48MiB), more than the run may take (64MiB, --max-memory)`, 0},
		{"inline past", inline(9000), nil,
			`key "asm": the assembly's 9000 lines and 36000 bytes would take up to 21 MiB to parse`, "", 0},
		{"streams together past", "streams: [a.s, a.s]\n", map[string]string{"a.s": nops(6000)},
			`key "streams[1]": the assembly's 6000 lines and 24000 bytes would take up to 14 MiB to parse (~2 KiB a line, 96 bytes a byte of code, with the 14 MiB of the assembly before it, beside the run's own 48 MiB): about 84MiB of host memory in all (its data 28MiB, its chip model 7MiB`,
			`key "streams[1]": the assembly's 6000 lines and 24000 bytes would take up to 14 MiB to parse (~2 KiB a line, 96 bytes a byte of code, with the 14 MiB of the assembly before it, beside the run's own 48 MiB): about 136MiB of host memory in all (its data 28MiB, its chip model 59MiB`, 0},
		// 11 MiB parsed and an 8 MiB output: each fits beside the run's
		// own 48 MiB, not both.
		{"with the data", "outputs: [{name: y, addr: 0, shape: [2097152]}]\nfile: a.s\n", map[string]string{"a.s": nops(5000)}, "",
			`key "numerics": full numerics needs more host memory than the run may take (64MiB, --max-memory): the GM pages that the gm tensors and the program's writes touch, 0 MiB, the outputs and the largest tensor's staging, 8 MiB, and the run's own 59 MiB; use numerics off`, 0},
		// A bound below the run's own: the assembly is refused where it
		// alone passes the bound (else the base is, by the chip model's
		// room: TestHostMemoryRefusalsMarked).
		{"the parse alone past", "file: a.s\n", map[string]string{"a.s": nops(20000)},
			`key "file": the assembly's 20000 lines and 80000 bytes would take up to 47 MiB to parse (~2 KiB a line, 96 bytes a byte of code, beside the run's own 48 MiB): about 102MiB of host memory in all (its data 46MiB, its chip model 7MiB and the run's base 48MiB), more than the run may take (32MiB, --max-memory)`,
			`key "file": the assembly's 20000 lines and 80000 bytes would take up to 47 MiB to parse (~2 KiB a line, 96 bytes a byte of code, beside the run's own 48 MiB): about 154MiB of host memory in all (its data 46MiB, its chip model 59MiB and the run's base 48MiB), more than the run may take (32MiB, --max-memory)`, 32 << 20},
	} {
		bound := cmp.Or(c.bound, defaultBound)
		for _, numerics := range []string{"off", "full"} {
			f := programFiles(t, "kind: asm\nnumerics: "+numerics+"\n"+c.rest, c.files)
			want := c.want
			if numerics == "full" && c.full != "" {
				want = c.full
			}
			if want == "" { // (built: the run would refuse ascend-910a's model under this bound)
				m, err := MachineFor(f, Options{})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := f.Kind.Build(f, m, Options{MaxHostBytes: bound}); err != nil {
					t.Errorf("%s (numerics %s): %v", c.name, numerics, err)
				}
				if est, _ := HostBytes(f, Options{}); est < runHostBytes+isa.ParseHostBytes(c.files["a.s"]) {
					t.Errorf("%s (numerics %s): HostBytes %d leaves out the parse", c.name, numerics, est)
				}
				continue
			}
			// The sweep's estimate refuses it too (numerics off, the
			// model's 7 MiB: only with the parse).
			if est, ok := HostBytes(f, Options{}); !ok || est <= bound {
				t.Errorf("%s (numerics %s): HostBytes %d, within the bound that refuses the run", c.name, numerics, est)
			}
			_, err := Execute(f, Options{MaxHostBytes: bound}, RunHooks{})
			if got, ok := badinput.HostMemoryBound(err); err == nil || !strings.Contains(err.Error(), want) || !badinput.Is(err) || !ok || got != bound || strings.Contains(err.Error(), "\n") {
				t.Errorf("%s (numerics %s): got %v, want one line of bad input (host memory) containing %q", c.name, numerics, err, want)
			}
		}
	}
}
