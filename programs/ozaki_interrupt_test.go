package programs

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/davinci-sim/davinci-sim/stopwork"
)

// phaseStop is a run's context, done once it is asked from a function
// whose name holds phase (an interrupt there, wherever that falls in
// time).
type phaseStop struct {
	context.Context
	phase string
	done  chan struct{}
	mu    sync.Mutex
	asked bool // asked from the phase (and done since)
}

func newPhaseStop(phase string) *phaseStop {
	return &phaseStop{Context: context.Background(), phase: phase, done: make(chan struct{})}
}

// expectPhaseStop runs file with sets, its context cancelled where phase
// first asks it, and wants the run to stop there saying want.
func expectPhaseStop(t *testing.T, file, phase string, sets []string, want string) {
	t.Helper()
	f, err := ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	ctx := newPhaseStop(phase)
	_, err = Execute(f, Options{Overrides: mustSets(t, sets...)}, RunHooks{Context: ctx})
	if !ctx.asked {
		t.Errorf("%s %v: never asked the run's context (%v)", phase, sets, err)
		return
	}
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), want) {
		t.Errorf("%s %v: %v; want the interruption, %q", phase, sets, err, want)
	}
}

func (c *phaseStop) Done() <-chan struct{} { return c.done }

func (c *phaseStop) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.asked {
		pcs := make([]uintptr, 6)
		frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs)])
		for more := true; more; {
			var f runtime.Frame
			f, more = frames.Next()
			if strings.HasSuffix(f.Function, c.phase) {
				c.asked = true
				close(c.done)
				break
			}
		}
	}
	if c.asked {
		return context.Canceled
	}
	return nil
}

// An Ozaki run interrupted in any of its long phases — drawing or reading
// the inputs, ADP's plan, the slicing, ozaki-ii's residues, writing the
// simulated memory, Finish's numerics — stops there, saying where: each
// asks the run's context (the CLI's TestRunInterrupted times how
// promptly).
func TestOzakiInterruptedPhases(t *testing.T) {
	dir := t.TempDir()
	for i, name := range []string{"A", "B"} {
		v := genFloat64(Inputs{Distribution: DistUniform, Seed: 1}, uint64(i+1), 256, 256)
		v32 := make([]float32, len(v))
		for j, x := range v {
			v32[j] = float32(x)
		}
		var b8, b4 bytes.Buffer
		if err := writeNPYAs(&b8, "<f8", v, []int{256, 256}); err != nil {
			t.Fatal(err)
		}
		if err := writeNPYAs(&b4, "<f4", v32, []int{256, 256}); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, name+".npy"), b8.Bytes(), 0o644)
		os.WriteFile(filepath.Join(dir, name+"32.npy"), b4.Bytes(), 0o644)
	}
	small := []string{"program.m=256", "program.n=256", "program.k=256", "program.numerics=sampled"}
	ii := []string{"program.method=ozaki-ii", "program.precision="}
	full := []string{"program.numerics=full"}
	files := []string{"program.inputs.a=" + filepath.Join(dir, "A.npy"), "program.inputs.b=" + filepath.Join(dir, "B.npy")}
	files32 := []string{"program.inputs.a=" + filepath.Join(dir, "A32.npy"), "program.inputs.b=" + filepath.Join(dir, "B32.npy")}
	for _, c := range []struct {
		phase string   // the function asking
		sets  []string // beyond small
		want  string   // the error says
	}{
		{"programs.genFloat64Until", nil, "stopped drawing the inputs"},
		{"programs.genFloat64Until", []string{"program.beta=0.5"}, "stopped drawing the inputs"},
		{"programs.stopReader.Read", files, "stopped reading inputs.a"},
		{"programs.readNPYFloat64Until", files32, "stopped reading inputs.a"}, // (widening float32)
		{"ozaki.escTables.func1", nil, "stopped computing ADP's plan (the ESC)"},
		{"ozaki.sliceRows", nil, "stopped slicing the inputs"},
		{"crt.(*Plan).ResiduesUntil", ii, "stopped computing the residues"},
		{"programs.(*ozakiJob).sampledOutputsUntil", nil, "computing its numerics"},
		{"programs.exactGEMM64Until", nil, "computing its numerics"},
		{"programs.(*ozakiJob).sampledOutputsUntil", ii, "computing its numerics"},
		// Numerics full: Prepare's writes, the planes read back.
		{"programs.(*ozakiJob).writeFloat64s", full, "stopped writing the inputs to simulated memory"},
		{"programs.(*ozakiJob).Prepare", full, "stopped writing the inputs to simulated memory"},
		{"programs.(*ozakiJob).crtPrepare", append(slices.Clone(ii), full...), "stopped writing the inputs to simulated memory"},
		{"programs.(*ozakiJob).simulatedC", full, "computing its numerics"},
		{"programs.(*ozakiJob).crtSimulatedC", append(slices.Clone(ii), full...), "computing its numerics"},
	} {
		expectPhaseStop(t, "examples/b200-ozaki.yaml", c.phase, append(slices.Clone(small), c.sets...), c.want)
	}
}

// exactGEMM64Until asks stop every stopwork.Every products (at the next
// output's start) and stops when it says so.
func TestExactGEMM64Until(t *testing.T) {
	m, k, n := 20, 5000, 15
	in := Inputs{Distribution: DistUniform, Seed: 3}
	a, b := genFloat64(in, 1, m, k), genFloat64(in, 2, k, n)
	asks := 0
	ref, abs, ok := exactGEMM64Until(a, b, m, k, n, nil, true, func() bool { asks++; return false })
	wref, wabs := exactGEMM64(a, b, m, k, n, nil, true)
	if !ok || !slices.Equal(ref, wref) || !slices.Equal(abs, wabs) {
		t.Error("values differ from exactGEMM64's")
	}
	if want := m * n * k / (stopwork.Every + k); asks < want {
		t.Errorf("stop asked %d times for %d products, want at least %d", asks, m*n*k, want)
	}
	if ref, _, ok := exactGEMM64Until(a, b, m, k, n, []int{5, 6, 7}, false, func() bool { return true }); ok || ref != nil {
		t.Error("not stopped")
	}
}
