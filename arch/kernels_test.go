package arch

import "testing"

// The work counters of ffSnap's layout (what a tail skip takes whole from
// the kernel before, fastForward.isWork): the chip's global-memory bytes
// and HBM writes, and per core each lane's instructions, the path bytes
// and the vector repeats — not the events, the caches' counters, the L2,
// LLC or HBM reads, nor any lane's time by cause.
func TestIsWork(t *testing.T) {
	const lanes, paths, cores = 3, 2, 2
	ff := &fastForward{lanes: make([]struct{}, lanes), paths: paths}
	want := map[int]bool{ffGMRead: true, ffGMWrite: true, ffTrafficGMRead: true, ffTrafficGMWrite: true, ffTrafficHBMWrite: true}
	block := lanes*(int(NumCauses)+1) + paths + 1
	for c := range cores {
		base := ffGlobal + c*block
		for l := range lanes {
			want[base+l*(int(NumCauses)+1)+int(NumCauses)] = true // instructions
		}
		for p := range paths + 1 { // path bytes, vector repeats
			want[base+lanes*(int(NumCauses)+1)+p] = true
		}
	}
	for k := range ffGlobal + cores*block {
		if got := ff.isWork(k); got != want[k] {
			t.Errorf("counter %d: isWork %v, want %v", k, got, want[k])
		}
	}
}
