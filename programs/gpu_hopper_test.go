package programs

import (
	"strings"
	"testing"
)

// On Hopper and Blackwell the tensor instructions read A and B from shared
// memory (wgmma SS, tcgen05): the kernels issue no ldmatrix, Blackwell's
// accumulators live in TMEM and are read out once (tcgen05.ld) before the
// store — and C is still the golden model's bit for bit (check: true).
func TestSharedOperandKernels(t *testing.T) {
	for _, c := range []struct {
		file, machine string
		sets          []string
		ldsm          uint64 // ldsm-lane instructions: the TMEM reads of the epilogues, one a CTA (64×64 tiles on these small shapes)
		tmem          bool
	}{
		{"a100-hgemm", "h100-sxm", []string{"program.m=300", "program.n=260", "program.k=200"}, 0, false},
		{"a100-igemm", "h100-sxm", []string{"program.m=130", "program.n=300", "program.k=256"}, 0, false},
		{"a100-hgemm", "b200", []string{"program.m=300", "program.n=260", "program.k=200"}, 25, true},
		{"a100-tf32gemm", "b200", []string{"program.m=100", "program.n=70", "program.k=77"}, 4, true},
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

// hgemm's input: BF16 and FP8 (E4M3, E5M2) inputs on the machines whose
// matrix units take them, bit for bit the golden model (check: true); the
// errors grow with the coarser formats; refused where the units or the
// numerics preset lack them, and on DaVinci.
func TestHGEMMInputs(t *testing.T) {
	for _, c := range []struct {
		machine, input string
		bitsLo, bitsHi float64
	}{
		{"a100", "bf16", 7, 10}, {"mi210", "bf16", 7, 10}, {"mi300x", "bf16", 7, 10},
		{"h100-sxm", "e4m3", 3, 6}, {"b200", "e5m2", 2, 5}, {"rtx-pro-6000", "e4m3", 3, 6},
	} {
		res, err := Execute(mustRead(t, "examples/a100-hgemm.yaml"), Options{Machine: c.machine,
			Overrides: mustSets(t, "program.input="+c.input, "program.m=200", "program.n=130", "program.k=160")}, RunHooks{})
		if err != nil {
			t.Fatalf("%s on %s: %v", c.input, c.machine, err)
		}
		if res.Failure != nil {
			t.Fatalf("%s on %s: %v", c.input, c.machine, res.Failure)
		}
		if e := res.Report.Error; e == nil || e.Bits < c.bitsLo || e.Bits > c.bitsHi {
			t.Errorf("%s on %s: error %+v", c.input, c.machine, res.Report.Error)
		}
	}
	for _, c := range []struct{ machine, input, want string }{
		{"a100", "e4m3", `key "input": hgemm needs E4M3 tensor cores`},
		{"mi300x", "e4m3", `no model of E4M3 MFMA instructions`},
		{"h100-sxm", "fp4", `key "input": must be fp16, bf16, e4m3 or e5m2`},
		{"ascend-910a", "bf16", `key "input": the DaVinci cube's hgemm takes fp16`},
	} {
		_, err := Execute(mustRead(t, "examples/a100-hgemm.yaml"), Options{Machine: c.machine, Overrides: mustSets(t, "program.input="+c.input)}, RunHooks{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s on %s: %v, want %q", c.input, c.machine, err, c.want)
		}
	}
}

// The GPU cores count the bytes of every copy path (energy statistics):
// on the A100 hgemm the global→shared copies are exactly the GM reads, and
// the stores of C exactly the GM writes.
func TestGPUPathBytes(t *testing.T) {
	res, err := Execute(mustRead(t, "examples/a100-hgemm.yaml"), Options{Overrides: mustSets(t, "program.numerics=off")}, RunHooks{})
	if err != nil {
		t.Fatal(err)
	}
	st := res.Stats
	by := map[string]int64{}
	for _, cs := range st.Cores {
		for i, n := range cs.PathBytes {
			by[st.Geometry.Paths[i].Name] += n
		}
	}
	if by["GM_SMEM"] != st.GMReadBytes || by["RF_GM"] != st.GMWriteBytes || by["SMEM_RF"] == 0 {
		t.Errorf("path bytes %v, GM read %d, written %d", by, st.GMReadBytes, st.GMWriteBytes)
	}
}
