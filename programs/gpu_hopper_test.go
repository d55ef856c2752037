package programs

import "testing"

// On Hopper and Blackwell the tensor instructions read A and B from shared
// memory (wgmma SS, tcgen05): the kernels issue no ldmatrix, Blackwell's
// accumulators live in TMEM and are read out once (tcgen05.ld) before the
// store — and C is still the golden model's bit for bit (check: true).
func TestSharedOperandKernels(t *testing.T) {
	for _, c := range []struct {
		file, machine string
		sets          []string
		ldsm          uint64 // ldsm-lane instructions: the TMEM reads of the epilogues
		tmem          bool
	}{
		{"a100-hgemm", "h100-sxm", []string{"program.m=300", "program.n=260", "program.k=200"}, 0, false},
		{"a100-igemm", "h100-sxm", []string{"program.m=130", "program.n=300", "program.k=256"}, 0, false},
		{"a100-hgemm", "b200", []string{"program.m=300", "program.n=260", "program.k=200"}, 6, true},
		{"a100-tf32gemm", "b200", []string{"program.m=100", "program.n=70", "program.k=77"}, 1, true},
	} {
		res, err := Execute(mustRead(t, "examples/"+c.file+".yaml"), Options{Machine: c.machine, Overrides: mustSets(t, c.sets...)}, RunHooks{})
		if err != nil {
			t.Fatalf("%s on %s: %v", c.file, c.machine, err)
		}
		if res.Failure != nil {
			t.Fatalf("%s on %s: %v", c.file, c.machine, res.Failure)
		}
		if got := res.Report.Pipes["ldsm"].Instrs; got != c.ldsm {
			t.Errorf("%s on %s: %d ldsm instructions, want %d", c.file, c.machine, got, c.ldsm)
		}
		if b, ok := res.Report.Buffers["TMEM"]; ok != c.tmem || c.tmem && b.PeakBytes == 0 {
			t.Errorf("%s on %s: TMEM %+v (present %v), want used %v", c.file, c.machine, b, ok, c.tmem)
		}
		if res.Report.Error == nil || res.Report.Error.Bits < 8 {
			t.Errorf("%s on %s: error %+v", c.file, c.machine, res.Report.Error)
		}
	}
}
