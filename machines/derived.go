package machines

import "github.com/davinci-sim/davinci-sim/fp"

// InputTypes returns the input formats the cube accepts (those with a
// non-zero k-step).
func (c Cube) InputTypes() []fp.Format {
	var out []fp.Format
	if c.KStepFP16 > 0 {
		out = append(out, fp.FP16)
	}
	if c.KStepBF16 > 0 {
		out = append(out, fp.BF16)
	}
	if c.KStepFP32 > 0 {
		out = append(out, fp.FP32)
	}
	if c.KStepINT8 > 0 {
		out = append(out, fp.INT8)
	}
	return out
}

// KStep returns the reduction depth per cycle for input format f (0 when the
// cube does not accept it).
func (c Cube) KStep(f fp.Format) int {
	switch f {
	case fp.FP16:
		return c.KStepFP16
	case fp.BF16:
		return c.KStepBF16
	case fp.FP32:
		return c.KStepFP32
	case fp.INT8:
		return c.KStepINT8
	}
	return 0
}
