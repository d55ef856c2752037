package programs

import (
	"fmt"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/badinput"
)

// The generated DaVinci kernels run on a machine of as many flag ids per
// pipe pair as their kind says (generatorFlagIDs, 3; emulated-gemm 4) as
// on one of 8 (the same time, the same error: no id past them is used —
// the core refuses one at run time), and a machine of fewer is refused
// before the run, naming core.flag_ids. Before, a machine of 1 was taken:
// the ids past it landed on other pipe pairs' counters, the kernels raced,
// and lu-fused-small's LU came out wrong (scaled residual 0.8 for 0.008,
// "passed"), hgemm's C off by 24 %, with exit 0 unless the program checked
// itself.
func TestGeneratorFlagIDs(t *testing.T) {
	small := []string{"program.m=256", "program.n=256", "program.k=256"}
	for _, c := range []struct {
		file string
		need int
		sets []string
	}{
		{"sgemm-cube.yaml", 3, append([]string{"program.numerics=full"}, small...)},
		{"hgemm.yaml", 3, small},
		{"sgemm-910b3.yaml", 3, append([]string{"program.numerics=full"}, small...)},
		{"ascend-910a-emulated-gemm.yaml", 4, append([]string{"program.numerics=full"}, small...)}, // ootomo: the outside accumulators' ids 2, 3
		{"ascend-910a-emulated-gemm.yaml", 4, append([]string{"program.numerics=full", "program.scheme=ape-int16"}, small...)},
		{"ascend-910a-ozaki.yaml", 3, small},
		{"lu-fused-small.yaml", 3, []string{"program.n=512"}},
		{"lu-gemm256.yaml", 3, []string{"program.m=1024"}},
		{"lu-cluster-small.yaml", 3, []string{"program.n=512"}},
	} {
		t.Run(c.file+" "+strings.Join(c.sets, " "), func(t *testing.T) {
			want := executeExample(t, c.file, c.sets...)
			got := executeExample(t, c.file, append(c.sets, fmt.Sprintf("machine.core.flag_ids=%d", c.need))...)
			if got.Time.Seconds != want.Time.Seconds || fmt.Sprint(got.Error) != fmt.Sprint(want.Error) {
				t.Errorf("flag_ids %d: %v s, error %+v; flag_ids 8: %v s, %+v", c.need, got.Time.Seconds, got.Error, want.Time.Seconds, want.Error)
			}
			f, err := ReadFile("examples/" + c.file)
			if err != nil {
				t.Fatal(err)
			}
			_, err = Execute(f, Options{Overrides: mustSets(t, append(c.sets, fmt.Sprintf("machine.core.flag_ids=%d", c.need-1))...)}, RunHooks{})
			if want := fmt.Sprintf(`--set machine.core.flag_ids=%d: key "core.flag_ids": must be at least %d`, c.need-1, c.need); err == nil || !badinput.Is(err) || !strings.Contains(err.Error(), want) {
				t.Errorf("flag_ids %d: %v, want bad input %q", c.need-1, err, want)
			}
		})
	}
}
