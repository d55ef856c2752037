package stopwork

import "testing"

// A Stopper asks before the first unit of work, then once Every units
// have passed since it last asked (a unit of work at a time or many), ends
// at a true, and with a nil stop (or as the zero Stopper) never asks.
func TestStopper(t *testing.T) {
	for _, work := range []int{1, 7, 4096, Every, 3 * Every} {
		asks := 0
		st := New(func() bool { asks++; return false })
		units := 0
		var at []int // units done when it asked
		for units < 5*Every {
			before := asks
			if st.StopBefore(work) {
				t.Fatalf("work %d: stopped without a true", work)
			}
			if asks != before {
				at = append(at, units)
			}
			units += work
		}
		if len(at) == 0 || at[0] != 0 {
			t.Errorf("work %d: first asked after %v units, want before the first", work, at)
		}
		for i := 1; i < len(at); i++ {
			if gap := at[i] - at[i-1]; gap < Every || gap >= Every+work {
				t.Errorf("work %d: asked %d units after the last question, want Every (%d) or just over", work, gap, Every)
			}
		}
		n := 0
		st = New(func() bool { n++; return n == 2 })
		for i := 0; ; i++ {
			if st.StopBefore(work) {
				if n != 2 {
					t.Errorf("work %d: stopped at ask %d, want the second", work, n)
				}
				break
			}
			if i > 4*Every {
				t.Fatalf("work %d: never stopped", work)
			}
		}
	}
	nilStop := New(nil)
	var zero Stopper
	for i := 0; i < 3*Every; i++ {
		if nilStop.StopBefore(1) || zero.StopBefore(1) {
			t.Fatal("a nil stop said stop")
		}
	}
}
