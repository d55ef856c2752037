package traces_test
import ("testing";"runtime";"github.com/davinci-sim/davinci-sim/machines";"github.com/davinci-sim/davinci-sim/programs";"github.com/davinci-sim/davinci-sim/traces")
func TestZZMem(t *testing.T){
	f, _ := programs.ReadFile("../programs/examples/sgemm-cube.yaml")
	var opts programs.Options
	for _, s := range []string{"program.m=2048", "program.n=2048", "program.k=2048", "program.numerics=off"} {
		ov, _ := machines.ParseOverride(s); opts.Overrides = append(opts.Overrides, ov)
	}
	var m0, m1 runtime.MemStats
	runtime.GC(); runtime.ReadMemStats(&m0)
	rec := traces.NewRecorder(traces.Window{})
	res, _ := programs.Execute(f, opts, programs.RunHooks{Observer: rec})
	rec.Finish(res.Stats.Time)
	tl := rec.Timeline()
	runtime.GC(); runtime.ReadMemStats(&m1)
	n, fl := 0, 0
	for _, c := range tl.Cores { for p := range c.Pipes { n += c.Pipes[p].Len() }; fl += len(c.Flows) }
	var ins uint64
	for _, c := range res.Stats.Cores { for _, p := range c.Pipes { ins += p.Instrs } }
	t.Logf("instrs %d slices %d flows %d footprint %.1f MB (%.1f B/slice, %.1f B/instr) heap %.1f MB", ins, n, fl, float64(tl.Footprint())/1e6, float64(tl.Footprint())/float64(n), float64(tl.Footprint())/float64(ins), float64(m1.HeapAlloc-m0.HeapAlloc)/1e6)
	runtime.KeepAlive(rec)
}
