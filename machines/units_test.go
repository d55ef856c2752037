package machines

import (
	"math"
	"reflect"
	"strings"
	"testing"
)

func TestParseSize(t *testing.T) {
	good := []struct {
		in   string
		want Size
	}{
		{"1MiB", 1 << 20},
		{"512KiB", 512 << 10},
		{"64 KiB", 64 << 10},
		{"1048576", 1048576},
		{"2GiB", 2 << 30},
		{"1.5MiB", 3 << 19},
		{"1KB", 1000},
		{"1.5MB", 1500000},
		{"32GB", 32e9},
		{"1TiB", 1 << 40},
		{"100B", 100},
		{"1kiB", 1024},
		{" 8 MiB ", 8 << 20},
		{"1e3", 1000},
		{"0", 0},
		{"0.5KiB", 512},
		// A file's YAML integers, as --set gives them too.
		{"0x10", 16}, {"0x100000", 1 << 20}, {"1_048_576", 1 << 20}, {"0o20", 16},
	}
	for _, c := range good {
		got, err := ParseSize(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
	bad := []struct{ in, msg string }{
		{"", "not a number"},
		{"MiB", "not a number"},
		{"1.5", "whole number"},
		{"1.0000001KiB", "whole number"},
		{"-1KiB", `"-1KiB" is negative: the quantity cannot be below 0`}, // (it said "not a number")
		{"-1e3", "is negative"},
		// B: the hex digit, or bytes? (it read as the digit)
		{"0x100000B", `bad size "0x100000B": a hexadecimal size ending in B is ambiguous (the digit, or bytes?): write 0x100000 for 1048576 bytes, or 16777227`},
		{"0x1b", "ambiguous"},
		{"1XB", "not a number"},
		{"1 MiB MiB", "not a number"},
		{"-0x10", "not a number"},
		{"0x1p4", "not a number"},
		{"1e9999GiB", "not a number"}, // exponent too long
		{"9e18GiB", "too large"},
		{"1e-3", "whole number"},
		{"NaN", "not a number"},
		{"Inf", "not a number"},
		{"8Mb", `"8Mb": a lowercase b is a bit, and davinci-sim counts bytes (B): divide by 8 (8Mb = 1MB)`},
		{"1 kib", "a lowercase b is a bit"},
	}
	for _, c := range bad {
		_, err := ParseSize(c.in)
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("ParseSize(%q) error = %v; want one containing %q", c.in, err, c.msg)
		}
	}
	// The units are listed where letters are no unit, not where the
	// number is wrong.
	for in, list := range map[string]bool{"1EiB": true, "1XB": true, "big": true, "-1KiB": false, "1.2.3GB": false} {
		_, err := ParseSize(in)
		if got := err != nil && strings.Contains(err.Error(), "(TiB, GiB, MiB, KiB, TB, GB, MB, KB, B)"); got != list {
			t.Errorf("ParseSize(%q) error = %v; units listed %v, want %v", in, err, got, list)
		}
	}
}

func TestSizeString(t *testing.T) {
	cases := []struct {
		in   Size
		want string
	}{
		{1 << 20, "1MiB"}, {512 << 10, "512KiB"}, {3 << 19, "1.5MiB"}, {32 << 30, "32GiB"},
		{100, "100B"}, {1000, "1KB"}, {32000, "32KB"}, {0, "0B"}, {1088 << 10, "1088KiB"}, {1536000, "1500KiB"},
		{1 << 40, "1TiB"}, {1025, "1025B"},
	}
	for _, c := range cases {
		if got := c.in.String(); got != c.want {
			t.Errorf("Size(%d).String() = %q; want %q", int64(c.in), got, c.want)
		}
		if back, err := ParseSize(c.in.String()); err != nil || back != c.in {
			t.Errorf("ParseSize(%q) = %d, %v; want round trip to %d", c.in.String(), back, err, int64(c.in))
		}
	}
}

func TestParseFrequency(t *testing.T) {
	good := []struct {
		in   string
		want Frequency
	}{
		{"1GHz", 1e9}, {"1.8 GHz", 1.8e9}, {"1e9", 1e9}, {"800MHz", 800e6}, {"32kHz", 32e3},
		{"50Hz", 50}, {"1.85ghz", 1.85e9},
	}
	for _, c := range good {
		got, err := ParseFrequency(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseFrequency(%q) = %v, %v; want %v", c.in, float64(got), err, float64(c.want))
		}
	}
	for _, in := range []string{"", "GHz", "fast", "-1GHz", "1 GB", "1e9999", "Inf", "1mHz", "1mhz"} {
		if _, err := ParseFrequency(in); err == nil || !strings.Contains(err.Error(), "bad frequency") {
			t.Errorf("ParseFrequency(%q) error = %v; want a bad frequency error", in, err)
		}
	}
	// mHz is millihertz (it read as 1MHz): refused, saying so.
	if _, err := ParseFrequency("2 mHz"); err == nil || !strings.Contains(err.Error(), `"2 mHz": a lowercase m is milli (a thousandth): write 2MHz`) {
		t.Errorf("ParseFrequency(2 mHz): %v", err)
	}
	if _, err := ParseSize("1miB"); err == nil || !strings.Contains(err.Error(), "write 1MiB") {
		t.Errorf("ParseSize(1miB): %v", err)
	}
	if _, err := ParseBandwidth("3mB/s"); err == nil || !strings.Contains(err.Error(), "write 3MB/s") {
		t.Errorf("ParseBandwidth(3mB/s): %v", err)
	}
	for _, c := range []struct {
		in   Frequency
		want string
	}{{1e9, "1GHz"}, {1.8e9, "1.8GHz"}, {800e6, "800MHz"}, {50, "50Hz"}, {0.5, "0.5Hz"}, {0, "0"},
		{1e-30, "1e-30Hz"}, {3e27, "3e+15THz"}} {
		if got := c.in.String(); got != c.want {
			t.Errorf("Frequency(%v).String() = %q; want %q", float64(c.in), got, c.want)
		}
	}
}

func TestParseBandwidth(t *testing.T) {
	good := []struct {
		in   string
		want Bandwidth
	}{
		{"1.2TB/s", 1.2e12}, {"135GB/s", 135e9}, {"1228e9", 1228e9}, {"1228 GB/s", 1228e9},
		{"1GiB/s", 1 << 30}, {"64B/s", 64}, {"100.9 gB/s", 100.9e9},
	}
	for _, c := range good {
		got, err := ParseBandwidth(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseBandwidth(%q) = %v, %v; want %v", c.in, float64(got), err, float64(c.want))
		}
	}
	for _, in := range []string{"", "TB/s", "1.2TB", "fast", "-5GB/s", "1.2 TB/s/s"} {
		if _, err := ParseBandwidth(in); err == nil || !strings.Contains(err.Error(), "bad bandwidth") {
			t.Errorf("ParseBandwidth(%q) error = %v; want a bad bandwidth error", in, err)
		}
	}
	for _, c := range []struct {
		in   Bandwidth
		want string
	}{{1.2e12, "1.2TB/s"}, {135e9, "135GB/s"}, {1228e9, "1.228TB/s"}, {1 << 30, "1.073741824GB/s"}, {5, "5B/s"},
		{1e-300, "1e-300B/s"}, {5e-324, "5e-324B/s"}, {1.5e-5, "1.5e-05B/s"}, {1e-4, "0.0001B/s"},
		{999e21, "999000000000TB/s"}, {1e24, "1e+12TB/s"}, {1e300, "1e+288TB/s"}, {math.MaxFloat64, "1.7976931348623157e+308"}} {
		if got := c.in.String(); got != c.want {
			t.Errorf("Bandwidth(%v).String() = %q; want %q", float64(c.in), got, c.want)
		}
		if back, err := ParseBandwidth(c.in.String()); err != nil || back != c.in {
			t.Errorf("round trip of %v: %v, %v", float64(c.in), float64(back), err)
		}
	}
	if got := Bandwidth(1.2e12).BytesPerCycle(1e9); got != 1200 {
		t.Errorf("BytesPerCycle = %v; want 1200", got)
	}
}

// TestDecodeHook checks YAML numbers and strings for the unit types and the
// refusal to truncate fractions into integers.
func TestDecodeHook(t *testing.T) {
	cases := []struct {
		to   reflect.Type
		in   any
		want any
		err  string
	}{
		{sizeType, "1MiB", Size(1 << 20), ""},
		{sizeType, 4096, Size(4096), ""},
		{sizeType, 4096.0, Size(4096), ""},
		{sizeType, 1.5, nil, "whole number"},
		{sizeType, -32, nil, "negative"},
		{sizeType, int64(math.MaxInt64), Size(math.MaxInt64), ""}, // (exact: no float64 holds it)
		{sizeType, 1e19, nil, "too large"},
		{sizeType, true, nil, "number or a string"},
		{frequencyType, "1GHz", Frequency(1e9), ""},
		{frequencyType, 1e9, Frequency(1e9), ""},
		{frequencyType, 1000, Frequency(1000), ""},
		{bandwidthType, "1.6TB/s", Bandwidth(1.6e12), ""},
		{bandwidthType, -1.0, nil, "non-negative"},
		{reflect.TypeFor[int](), 2.0, int64(2), ""},
		{reflect.TypeFor[int](), 2.5, nil, "integer"},
	}
	for _, c := range cases {
		got, err := unitHook(reflect.TypeOf(c.in), c.to, c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("hook(%v → %v) error = %v; want %q", c.in, c.to, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("hook(%v → %v) = %#v, %v; want %#v", c.in, c.to, got, err, c.want)
		}
	}
}

// Bits are refused, not read as bytes: a network port's 100Gb/s is
// 12.5GB/s, and read as 100GB/s a link would run 8 times too fast.
func TestBandwidthBits(t *testing.T) {
	for in, want := range map[string]string{
		"100Gb/s": "divide by 8 (100Gb/s = 12.5GB/s)",
		"1tb/s":   "divide by 8 (1tb/s = 0.125TB/s)",
		"8b/s":    "(8b/s = 1B/s)",
	} {
		if _, err := ParseBandwidth(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseBandwidth(%q): %v, want %q", in, err, want)
		}
	}
	for in, want := range map[string]float64{"100GB/s": 100e9, "1gB/s": 1e9, "2 GiB/s": 2 << 30} {
		if b, err := ParseBandwidth(in); err != nil || float64(b) != want {
			t.Errorf("ParseBandwidth(%q) = %v, %v; want %g", in, b, err, want)
		}
	}
}

// TestParseSizeDown: a bound's fraction of a byte rounds down; a size
// (ParseSize) is still refused for it.
func TestParseSizeDown(t *testing.T) {
	for in, want := range map[string]Size{"1.4GiB": 1503238553, "1.5MiB": 3 << 19, "0.9B": 0, "1048576": 1 << 20} {
		if got, err := ParseSizeDown(in); err != nil || got != want {
			t.Errorf("ParseSizeDown(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	if _, err := ParseSize("1.4GiB"); err == nil || !strings.Contains(err.Error(), "whole number") {
		t.Errorf("ParseSize(1.4GiB): %v", err)
	}
	if _, err := ParseSizeDown("9000000000TiB"); err == nil || !strings.Contains(err.Error(), "too large") {
		t.Errorf("ParseSizeDown(9000000000TiB): %v", err)
	}
}
