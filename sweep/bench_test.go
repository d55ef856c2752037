package sweep

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkStudyJobs runs a 4-point timing-only SGEMM-cube study (2048³,
// a fraction of a second per point) with 1 and 2 workers: on two free
// cores the -j 2 time should be under 1/1.8 of the -j 1 time.
//
//	go test -run XXX -bench StudyJobs -benchtime 3x ./sweep/
func BenchmarkStudyJobs(b *testing.B) {
	dir := b.TempDir()
	prog := "kind: sgemm-cube\nm: 2048\nk: 2048\nn: 2048\nnumerics: off\n"
	if err := os.WriteFile(filepath.Join(dir, "p.yaml"), []byte(prog), 0o644); err != nil {
		b.Fatal(err)
	}
	study := "program: p.yaml\nmetrics: [flops.tflops]\nvary: {machine.core.buffers.L1: 256KiB..2MiB ×2}\n"
	s, err := ParseStudy("s.yaml", dir, []byte(study))
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Check(); err != nil {
		b.Fatal(err)
	}
	for _, jobs := range []int{1, 2} {
		b.Run(fmt.Sprintf("j%d", jobs), func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				out := filepath.Join(b.TempDir(), fmt.Sprint(i))
				if _, err := Run(s, Options{Out: out, Jobs: jobs, SkipCheck: true}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Seconds())/float64(b.N)/float64(len(s.Points)), "s/point")
		})
	}
}
