package programs

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// An lu-fused run stops while its host program is built: at n = 2^18 that
// took ~40 s, deaf to a SIGINT, before the run's first event.
func TestLUBuildStopsOnContext(t *testing.T) {
	f, err := ReadFile("examples/lu-fused-small.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	start := time.Now()
	_, err = Execute(f, Options{Numerics: NumericsOff, Overrides: mustSets(t, "program.n=262144", "machine.gm.capacity=10TB")}, RunHooks{Context: ctx})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "stopped building the host program") {
		t.Fatalf("%v; want the build stopped", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("stopped after %v; want within seconds of the cancel", d)
	}
}
