package machines

import (
	"strings"
	"testing"
)

// An override whose value the command line resolved (a file key's
// relative path made absolute) is quoted as typed, refusals included, and
// recorded as resolved.
func TestOverrideTyped(t *testing.T) {
	o := Override{Path: "program.inputs.a", Value: "/home/u/in/A.npy", Typed: "in/A.npy"}
	if got := o.String(); got != "program.inputs.a=in/A.npy" {
		t.Errorf("String() = %q", got)
	}
	if got := o.Full(); got != "program.inputs.a=/home/u/in/A.npy" {
		t.Errorf("Full() = %q", got)
	}
	if got := (Override{Path: "machine.cores", Value: "4"}).String(); got != "machine.cores=4" {
		t.Errorf("String() without Typed = %q", got)
	}
	long := strings.Repeat("d/", 100) + "A.npy"
	if got := (Override{Path: "program.inputs.a", Value: "/" + long, Typed: long}).String(); len(got) >= len("program.inputs.a=")+len(long) {
		t.Errorf("a long typed value is not clipped: %q", got)
	}
	// A refusal names the --set as typed.
	_, err := Load("a100", []Override{{Path: "machine.cores", Value: "0", Typed: "00"}})
	if err == nil || !strings.Contains(err.Error(), "--set machine.cores=00") {
		t.Errorf("refusal: %v; want it to quote --set machine.cores=00", err)
	}
}
