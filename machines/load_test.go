package machines

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/machines/clusters"
)

func mustLoad(t *testing.T, name string, ovs ...Override) *Machine {
	t.Helper()
	m, err := Load(name, ovs)
	if err != nil {
		t.Fatalf("Load(%q): %v", name, err)
	}
	return m
}

func TestEmbeddedMachines(t *testing.T) {
	names := Names()
	want := []string{"a100", "a800", "ascend-910a", "ascend-910b3", "b200", "gb200", "h100-sxm", "mi100", "mi210", "mi300x", "rtx-pro-6000", "t4", "v100"}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("Names() = %v, want %v", names, want)
	}
	for _, n := range names {
		m := mustLoad(t, n)
		if err := m.Validate(); err != nil {
			t.Errorf("%s: Validate: %v", n, err)
		}
		if m.Name != n || m.Description == "" {
			t.Errorf("%s: name %q, description %q", n, m.Name, m.Description)
		}
		if got, want := m.Core.VectorRepeatBytes(), m.Geometry().VectorRepeatBytes; got != want {
			t.Errorf("%s: VectorRepeatBytes() %d, geometry's %d", n, got, want)
		}
		src, err := Source(n)
		if err != nil || !bytes.Contains(src, []byte("# ")) {
			t.Errorf("Source(%q): %v (want commented YAML)", n, err)
		}
	}
	if _, err := Source("nope"); err == nil {
		t.Error("Source(nope) succeeded")
	}
}

// TestEmbeddedNumbers pins the published figures the files must carry.
func TestEmbeddedNumbers(t *testing.T) {
	a := mustLoad(t, "ascend-910a")
	checks := []struct {
		name      string
		got, want any
	}{
		{"910a cores", a.Cores, 32},
		{"910a clock", a.DaVinci().Clock, Frequency(1e9)},
		{"910a L1", a.DaVinci().Buffers.L1, Size(1 << 20)},
		{"910a L0A", a.DaVinci().Buffers.L0A, Size(64 << 10)},
		{"910a L0B", a.DaVinci().Buffers.L0B, Size(64 << 10)},
		{"910a L0C", a.DaVinci().Buffers.L0C, Size(256 << 10)},
		{"910a UB", a.DaVinci().Buffers.UB, Size(256 << 10)},
		{"910a cube", [4]int{a.DaVinci().Cube.M, a.DaVinci().Cube.N, a.DaVinci().Cube.KStepFP16, a.DaVinci().Cube.KStepFP32}, [4]int{16, 16, 16, 0}},
		{"910a int8", a.DaVinci().Cube.KStepINT8, 32},
		{"910a numerics", a.DaVinci().Cube.Numerics, "ascend-910a"},
		{"910a gm", a.GM.Capacity, Size(32 << 30)},
		{"910a fixpipe", a.DaVinci().FixPipe, false},
		{"910a l2", a.L2.Capacity, Size(32 << 20)},
	}
	b := mustLoad(t, "ascend-910b3")
	checks = append(checks, []struct {
		name      string
		got, want any
	}{
		{"910b3 cores", b.Cores, 20},
		{"910b3 clock", b.DaVinci().Clock, Frequency(1.8e9)},
		{"910b3 L1", b.DaVinci().Buffers.L1, Size(512 << 10)},
		{"910b3 L0C", b.DaVinci().Buffers.L0C, Size(128 << 10)},
		{"910b3 UB", b.DaVinci().Buffers.UB, Size(192 << 10)},
		{"910b3 gm", b.GM.Capacity, Size(64 << 30)},
		{"910b3 bw", b.GM.Bandwidth, Bandwidth(1.6e12)},
		{"910b3 kstep fp32", b.DaVinci().Cube.KStepFP32, 4},
		{"910b3 numerics", b.DaVinci().Cube.Numerics, "ascend-910b3"},
		{"910b3 fixpipe", b.DaVinci().FixPipe, true},
	}...)
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %v; want %v", c.name, c.got, c.want)
		}
	}
	if gb := float64(a.GM.Bandwidth) / 1e9; gb < 1200 || gb > 1230 {
		t.Errorf("910a GM bandwidth %v; want 1.2TB/s (Ape: 1228 GB/s)", a.GM.Bandwidth)
	}
	// SGEMM-cube: 73.73 TFLOP/s native FP32 on 910B3; 256 TFLOP/s FP16 on 910A
	// (262 at exactly 1 GHz).
	if p := peak(b, "FP32") / 1e12; math.Abs(p-73.73) > 0.01 {
		t.Errorf("910b3 FP32 peak %.3f TFLOP/s; want 73.73", p)
	}
	if p := peak(a, "FP16") / 1e12; p < 256 || p > 263 {
		t.Errorf("910a FP16 peak %.3f TFLOP/s; want 256..262", p)
	}
	// Calibration (ascend-910a.yaml header): per-core GM→L1 is the A2/A3
	// 135 GB/s at 1.85 GHz taken per cycle, and the chip total is bounded by
	// gm.bandwidth.
	if got := a.DaVinci().Paths.GM_L1.BytesPerCycle; math.Abs(got-135/1.85) > 0.1 {
		t.Errorf("910a GM_L1 = %v B/cycle; want 135 GB/s / 1.85 GHz", got)
	}
}

// TestEmbeddedFilesCommented requires a comment on every value line or on
// the line(s) just above it, so every number carries its source.
func TestEmbeddedFilesCommented(t *testing.T) {
	for _, n := range Names() {
		src, _ := Source(n)
		for _, l := range uncommented(src) {
			t.Errorf("%s.yaml: %s has no source comment", n, l)
		}
	}
	bare := "# header\ncores: 32 # src\ncore:\n  # src\n  clock: 1GHz\n  queue_depth: 32\n\n  flag_ids: 8\n"
	if got := uncommented([]byte(bare)); !reflect.DeepEqual(got, []string{"line 8"}) {
		t.Errorf("uncommented(bare) = %v; want [line 8]", got)
	}
}

// uncommented lists value lines that carry no comment, neither on the line
// nor in the comment block just above it (possibly above a run of value
// lines sharing it, or a section header).
func uncommented(src []byte) []string {
	var out []string
	lines := strings.Split(string(src), "\n")
	for i, l := range lines {
		s := strings.TrimSpace(l)
		if s == "" || strings.HasPrefix(s, "#") || strings.HasSuffix(s, ":") || strings.Contains(s, "#") ||
			strings.HasPrefix(s, "name:") || strings.HasPrefix(s, "description:") {
			continue
		}
		commented := false
		for j := i - 1; j >= 0; j-- {
			p := strings.TrimSpace(lines[j])
			if strings.HasPrefix(p, "#") {
				commented = true
				break
			}
			if p == "" || !strings.Contains(p, ":") || strings.Contains(p, "#") {
				break
			}
		}
		if !commented {
			out = append(out, fmt.Sprintf("line %d", i+1))
		}
	}
	return out
}

func TestOverrides(t *testing.T) {
	m := mustLoad(t, "ascend-910a",
		Override{Path: "machine.core.buffers.L1", Value: "512KiB"},
		Override{Path: "MACHINE.Core.Buffers.l0a", Value: "32768"},
		Override{Path: "machine.core.clock", Value: "1.5 GHz"},
		Override{Path: "machine.gm.bandwidth", Value: "2TB/s"},
		Override{Path: "machine.core.vector.cycles_per_repeat", Value: "3"},
		Override{Path: "machine.core.fixpipe", Value: "true"},
		Override{Path: "machine.core.cube.numerics", Value: "fp32-rz"},
		Override{Path: "program.tiling.bm", Value: "96"}, // not ours: ignored
	)
	if m.DaVinci().Buffers.L1 != 512<<10 || m.DaVinci().Buffers.L0A != 32768 || m.DaVinci().Clock != 1.5e9 ||
		m.GM.Bandwidth != 2e12 || m.DaVinci().Vector.CyclesPerRepeat != 3 || !m.DaVinci().FixPipe ||
		m.DaVinci().Cube.Numerics != "fp32-rz" {
		t.Errorf("overrides not applied: %+v", m)
	}
	if m.DaVinci().Buffers.UB != 256<<10 {
		t.Errorf("untouched key changed: UB = %v", m.DaVinci().Buffers.UB)
	}
}

func TestOverrideErrors(t *testing.T) {
	cases := []struct {
		o    Override
		want []string
	}{
		{Override{Path: "machine.core.bufers.L1", Value: "512KiB"},
			[]string{`--set machine.core.bufers.L1=512KiB`, `unknown key "machine.core.bufers.L1"`, `did you mean "buffers"`}},
		{Override{Path: "machine.nope", Value: "1"}, []string{`unknown key "machine.nope"`, "the top level has no key"}},
		{Override{Path: "machine.cores.x", Value: "1"}, []string{`unknown key "machine.cores.x"`, `"cores" is a value`}},
		{Override{Path: "machine.core.buffers", Value: "1MiB"}, []string{`"machine.core.buffers" is a section`, "L1, L0A"}},
		{Override{Path: "machine.core.buffers.L1", Value: "512KXB"}, []string{"--set machine.core.buffers.L1=512KXB", `key "core.buffers.L1"`, "bad size", `"512KXB"`}},
		{Override{Path: "machine.cores", Value: "2.5"}, []string{"--set machine.cores=2.5", `key "cores"`, "want an integer"}},
		{Override{Path: "machine.core.fixpipe", Value: "maybe"}, []string{"want true or false"}},
		{Override{Path: "machine.core.buffers.L1", Value: "100"}, []string{"--set machine.core.buffers.L1=100", `key "core.buffers.L1"`, "multiple of 32"}},
		{Override{Path: "machine.cores", Value: "0"}, []string{"--set machine.cores=0", `key "cores"`, "must be ≥ 1"}},
		{Override{Path: "machine.power.max_w", Value: "1"}, []string{"--set machine.power.max_w=1", `key "power.max_w"`, "at least static_w = 60 W"}},
	}
	// A key of the file refused against a value an override gave names the
	// override too (the file's key was not touched).
	if _, err := Load("a100", []Override{{Path: "machine.core.smem", Value: "1KiB"}}); err == nil || !strings.Contains(err.Error(), `key "core.smem_per_cta": must be ≤ smem = 1KiB (got 163KiB) (with --set machine.core.smem=1KiB)`) {
		t.Errorf("smem_per_cta against --set smem: %v", err)
	}
	// A power section begun by one --set on a machine that has none is
	// told in two problems, not one per copy path (mi210: 7, 828 bytes).
	if _, err := Load("mi210", []Override{{Path: "machine.power.static_w", Value: "50"}}); err == nil ||
		!strings.Contains(err.Error(), "a power section, once given, needs every figure") ||
		!strings.Contains(err.Error(), "GM_LDS, GM_VGPR, LDS_VGPR, VGPR_LDS, VGPR_GM are missing") ||
		strings.Count(err.Error(), "--set machine.power.static_w=50") != 2 {
		t.Errorf("a power section begun by --set: %v", err)
	}
	for _, c := range cases {
		_, err := Load("ascend-910a", []Override{c.o})
		if err == nil {
			t.Errorf("%v: no error", c.o)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v: error %q lacks %q", c.o, err, w)
			}
		}
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: error spans lines: %q", c.o, err)
		}
	}
}

func TestParseOverride(t *testing.T) {
	o, err := ParseOverride("machine.core.buffers.L1=512KiB")
	if err != nil || o != (Override{Path: "machine.core.buffers.L1", Value: "512KiB"}) {
		t.Errorf("got %+v, %v", o, err)
	}
	o, err = ParseOverride(" program.asm = a=b ")
	if err != nil || o != (Override{Path: "program.asm", Value: "a=b"}) {
		t.Errorf("got %+v, %v", o, err)
	}
	// Not UTF-8 (a value or a key): refused, as a YAML file's text would
	// be (machines --set "description=ok\xff" printed a view that did not
	// load again).
	for _, bad := range []string{"description=ok\xff\xfe", "program.m\xc3=1"} {
		if _, err := ParseOverride(bad); err == nil || !strings.Contains(err.Error(), "not UTF-8 text") {
			t.Errorf("ParseOverride(%q): %v, want not UTF-8 text", bad, err)
		}
	}
	for _, bad := range []string{"machine.cores", "=1", "machine..cores=1", "machine.=1"} {
		if _, err := ParseOverride(bad); err == nil {
			t.Errorf("ParseOverride(%q) succeeded", bad)
		}
	}
	if _, err := ParseOverrides([]string{"a=1", "b"}); err == nil {
		t.Error("ParseOverrides with a bad entry succeeded")
	}
	// A --set key given twice (in any case) is refused, naming both;
	// distinct keys of one section are not; ParseOverrides (defaults and
	// changes composed) keeps the last.
	if ovs, err := ParseOverrides([]string{"a=1", "A=2"}); err != nil || len(ovs) != 2 {
		t.Errorf("ParseOverrides of a path twice: %v, %v", ovs, err)
	}
	_, err = ParseSetFlags([]string{"program.m=64", "program.scheme=ootomo", "Program.M=128"})
	if err == nil || !strings.Contains(err.Error(), `key "Program.M" given twice (first as --set "program.m=64")`) {
		t.Errorf("a key given twice: %v", err)
	}
	if _, err := ParseSetFlags([]string{"program.scheme=ootomo", "program.scheme.split=fused", "program.scheme.pieces[1].scale=10"}); err != nil {
		t.Errorf("distinct keys of one section: %v", err)
	}
}

// variant returns the 910A file with old (once in it) replaced by new.
func variant(t *testing.T, old, new string) []byte {
	t.Helper()
	return mustVariantOf(t, "ascend-910a", old, new)
}

// mustVariantOf is variantOf's file.
func mustVariantOf(t *testing.T, name, old, new string) []byte {
	t.Helper()
	b, _ := variantOf(t, name, old, new)
	return b
}

func TestFileErrors(t *testing.T) {
	mapEntry, mapLine := variantOf(t, "ascend-910a", "    GM_UB: 2\n", "    GM_UB: lots\n")
	cases := []struct {
		name string
		data []byte
		want []string
	}{
		{"unknown key", variant(t, "  buffers:\n", "  bufers:\n"),
			[]string{"user.yaml:", `unknown key "core.bufers.L1"`, `did you mean "buffers"`}},
		{"unknown top key", variant(t, "cores: 32\n", "cores: 32\nchips: 2\n"),
			[]string{`unknown key "chips"`, "the top level has no key"}},
		{"bad size", variant(t, "L1: 1MiB", "L1: 1MeB"), []string{`key "core.buffers.L1"`, "bad size"}},
		{"fractional int", variant(t, "cores: 32", "cores: 32.5"), []string{`key "cores"`, "want an integer"}},
		{"string int", variant(t, "cores: 32", "cores: many"), []string{`key "cores"`, `want an integer, got "many"`}},
		{"section as value", variant(t, "  scalar:\n    # assumption: the scalar unit issues one instruction per cycle into a pipe\n    # queue (no public figure; the costs that matter sit in the pipes).\n    issue_cycles: 1\n", "  scalar: 1\n"),
			[]string{`key "core.scalar" is a section`}},
		{"value as section", variant(t, "cores: 32", "cores: {a: 1}"), []string{`key "cores" wants a value`}},
		{"constraint", variant(t, "flag_ids: 8", "flag_ids: 65"), []string{`key "core.flag_ids"`, "must be in 1..64"}},
		{"L1 case", variant(t, "L1: 1MiB", "l1: 100"), []string{`key "core.buffers.l1"`, "multiple of 32"}},
		{"missing key", variant(t, "  flag_ids: 8\n", ""), []string{`missing key "core.flag_ids"`}},
		{"duplicate key", variant(t, "cores: 32", "cores: 32\nCores: 16"), []string{"given twice"}},
		{"syntax", []byte("cores: [1\n"), []string{"user.yaml", "yaml:"}},
		{"not a mapping", []byte("- 1\n- 2\n"), []string{"top level must be a mapping"}},
		{"dotted key", []byte("core.clock: 1GHz\n"), []string{"must not contain '.'"}},
		// YAML 1.1's octal: 032 would be 26 here and 32 given by --set.
		{"octal", variant(t, "cores: 32", "cores: 032"), []string{"user.yaml:", `key "cores": 032 has a leading zero, which YAML reads as octal (26): write 32 for decimal, or 0o32 for octal`}},
		// YAML's null decoded as the zero value: "cores: ~" read as 0 cores.
		{"null", variant(t, "cores: 32", "cores: ~"), []string{"user.yaml:", `key "cores" has no value ("~", YAML's null): give one, or leave the key out for its default`}},
		{"nothing after the colon", variant(t, "cores: 32", "cores:"), []string{"user.yaml:", `key "cores" has no value (nothing after the colon, YAML's null)`}},
		{"self alias", []byte("a: &x {b: *x, c: *x}\n"), []string{"user.yaml:1: "}},
		{"merge key", []byte("a: &x {cores: 1}\n<<: *x\n"), []string{"<< merges"}},
		{"unknown kind", variant(t, "cores: 32", "kind: tpu\ncores: 32"), []string{"user.yaml:", `key "kind"`, `unknown machine kind "tpu"`, "davinci"}},
		{"kind not a string", variant(t, "cores: 32", "kind: [a]\ncores: 32"), []string{"user.yaml:", `key "kind"`}},
		{"l2 needs bandwidth", variant(t, "bandwidth: 4TB/s\n", "bandwidth: 0\n"), []string{`key "l2.bandwidth"`, "must be > 0 when l2.capacity > 0"}},
		{"lines per tag", variant(t, "lines_per_tag: 16\n", "lines_per_tag: 3\n"), []string{`key "l2.lines_per_tag"`, "power of two in 1..16"}},
		{"lines per tag too many", variant(t, "lines_per_tag: 16\n", "lines_per_tag: 32\n"), []string{`key "l2.lines_per_tag"`}},
		{"capacity in tags", variant(t, "capacity: 32MiB", "capacity: 33562624"), []string{`key "l2.capacity"`, "line_bytes × lines_per_tag × ways"}},
		// Sizes whose products overflowed (a division by zero, a negative
		// peak) before they were bounded.
		{"partitions", mustVariantOf(t, "mi300x", "partitions: 8", "partitions: 140737488355328"), []string{`key "l2.partitions"`, "must be in 0..4096"}},
		{"line bytes", mustVariantOf(t, "mi300x", "  line_bytes: 128\n  # assumption: a tag a line (not in GPU-FACTS: no figure for a sectored directory).\n  lines_per_tag: 1\n  # assumption: 16-way", "  line_bytes: 4611686018427387904\n  lines_per_tag: 1\n  # assumption: 16-way"), []string{`key "l2.line_bytes"`, "power of two up to 1048576"}},
		{"cube m", variant(t, "    m: 16", "    m: 9223372036854775807"), []string{`key "core.cube.m"`, "must be in 1..16384"}},
		{"simds", mustVariantOf(t, "mi210", "  simds: 4", "  simds: 1073741824"), []string{`key "core.simds"`, "must be in 1..64"}},
		{"lds banks", mustVariantOf(t, "mi210", "  lds_banks: 32", "  lds_banks: 4611686018427387904"), []string{`key "core.lds_banks"`, "power of two up to 1024"}},
		// 4 TiB of GM in 512-byte tags: 2^33 of them, more than the
		// directory's 32-bit tags name (mem.MaxSector).
		{"gm beyond the tags", bytes.Replace(variant(t, "lines_per_tag: 16\n", "lines_per_tag: 1\n"), []byte("capacity: 32GiB"), []byte("capacity: 4TiB"), 1),
			[]string{`key "l2.lines_per_tag"`, "spans gm.capacity", "tag more bytes"}},
		// The MI300X's L2s and LLC both tag 128 bytes: 1 TiB is 2^33 tags
		// for each directory.
		{"gm beyond the LLC's tags", mustVariantOf(t, "mi300x", "capacity: 192GiB", "capacity: 1TiB"),
			[]string{`key "l2.lines_per_tag"`, `key "llc.lines_per_tag"`, "spans gm.capacity 1TiB in 8589934592 tags"}},
		// A map entry's bad value is named by its own key and line (not
		// mapstructure's path_pj_per_byte[gm_ub] at the section's line).
		{"map entry", mapEntry, []string{fmt.Sprintf("user.yaml:%d: ", mapLine), `key "power.path_pj_per_byte.GM_UB": want a number, got "lots"`}},
	}
	for _, c := range cases {
		_, err := LoadBytes("user.yaml", c.data, nil)
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q lacks %q", c.name, err, w)
			}
		}
	}
	// Every problem is reported, one line each, with file and line.
	two := bytes.Replace(variant(t, "cores: 32", "cores: 0"), []byte("flag_ids: 8"), []byte("flag_ids: 0"), 1)
	_, err := LoadBytes("user.yaml", two, nil)
	if err == nil || len(strings.Split(err.Error(), "\n")) != 2 {
		t.Errorf("want two lines, got %v", err)
	} else {
		for _, l := range strings.Split(err.Error(), "\n") {
			if !strings.HasPrefix(l, "user.yaml:") {
				t.Errorf("line %q does not start with file:line", l)
			}
		}
	}
}

// TestUserFile loads a machine from a file path (the -m FILE case) and
// checks the name defaults to the file's base name.
func TestUserFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "small-l1.yaml")
	data := variant(t, "name: ascend-910a\n", "")
	data = bytes.Replace(data, []byte("L1: 1MiB"), []byte("L1: 256 KiB"), 1)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	m := mustLoad(t, p, Override{Path: "machine.cores", Value: "4"})
	if m.Name != "small-l1" || m.DaVinci().Buffers.L1 != 256<<10 || m.Cores != 4 {
		t.Errorf("got name %q L1 %v cores %d", m.Name, m.DaVinci().Buffers.L1, m.Cores)
	}
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, variant(t, "  buffers:\n", "  bufers:\n"), 0o644)
	if _, err := Load(bad, nil); err == nil || !strings.Contains(err.Error(), bad+":") ||
		!strings.Contains(err.Error(), `unknown key "core.bufers.L1"`) {
		t.Errorf("bad file: %v", err)
	}
	if _, err := Load(filepath.Join(dir, "missing.yaml"), nil); err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Errorf("missing file: %v", err)
	}
	if _, err := Load("ascend-9000", nil); err == nil || !strings.Contains(err.Error(), "unknown machine") {
		t.Errorf("unknown name: %v", err)
	}
}

// TestYAMLRoundTrip prints the effective configuration and loads it back.
func TestYAMLRoundTrip(t *testing.T) {
	for _, n := range Names() {
		if mustLoad(t, n).Kind != "davinci" {
			continue // the GPU files: TestNvidiaOverrides
		}
		ovs := []Override{{Path: "machine.core.buffers.L1", Value: "1.5MiB"}, {Path: "machine.description", Value: "yes: a \"quoted\" one"}}
		m := mustLoad(t, n, ovs...)
		out := m.YAML(ovs)
		if !bytes.Contains(out, []byte("L1: 1.5MiB  # --set")) {
			t.Errorf("%s: override not marked:\n%s", n, out)
		}
		back, err := LoadBytes("effective.yaml", out, nil)
		if err != nil {
			t.Fatalf("%s: reload: %v\n%s", n, err, out)
		}
		if !reflect.DeepEqual(back, m) {
			t.Errorf("%s: round trip differs:\n%+v\n%+v", n, back, m)
		}
	}
}

func TestSizeRoundTripRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		s := Size(r.Int64N(1 << r.IntN(63)))
		if back, err := ParseSize(s.String()); err != nil || back != s {
			t.Fatalf("Size %d → %q → %d, %v", int64(s), s.String(), int64(back), err)
		}
		f := Frequency(r.Float64() * math.Pow(10, float64(r.IntN(12))))
		if back, err := ParseFrequency(f.String()); err != nil || back != f {
			t.Fatalf("Frequency %v → %q → %v, %v", float64(f), f.String(), float64(back), err)
		}
		b := Bandwidth(r.Float64() * math.Pow(10, float64(r.IntN(14))))
		if back, err := ParseBandwidth(b.String()); err != nil || back != b {
			t.Fatalf("Bandwidth %v → %q → %v, %v", float64(b), b.String(), float64(back), err)
		}
	}
}

// progParams is a program-like parameter struct exercising the generic
// machinery the programs package uses.
type progParams struct {
	Kind   string            `mapstructure:"kind"`
	M      int               `mapstructure:"m"`
	Tiling struct{ BM int }  `mapstructure:"tiling"`
	Inputs map[string]string `mapstructure:"inputs"`
	Scales []float64         `mapstructure:"scales"`
	Budget Size              `mapstructure:"budget"`
	Extra  any               `mapstructure:"extra"`
	Fast   bool              `mapstructure:"fast"`
}

func TestGenericConfig(t *testing.T) {
	src := "kind: sgemm-cube\nm: 2048\ntiling: {bm: 176}\ninputs: {a: A.npy}\nscales: [1, 2]\nbudget: 1MiB\n"
	c, err := ReadYAML("prog.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var p progParams
	err = ApplyOverrides(c, &p, "program", []Override{
		{Path: "program.tiling.BM", Value: "96"}, {Path: "program.inputs.b", Value: "B.npy"}, {Path: "program.scales", Value: "[3, 4.5]"},
		{Path: "program.budget", Value: "2MiB"}, {Path: "program.extra", Value: "7"}, {Path: "program.fast", Value: "true"},
		{Path: "machine.cores", Value: "x"}, // ignored: other prefix
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := DecodeStrict(c, &p); err != nil {
		t.Fatal(err)
	}
	want := progParams{Kind: "sgemm-cube", M: 2048, Inputs: map[string]string{"a": "A.npy", "b": "B.npy"},
		Scales: []float64{3, 4.5}, Budget: 2 << 20, Extra: 7, Fast: true}
	want.Tiling.BM = 96
	if !reflect.DeepEqual(p, want) {
		t.Errorf("got %+v\nwant %+v", p, want)
	}
	if c.Viper().GetInt("tiling.bm") != 96 {
		t.Errorf("viper does not hold the override")
	}
	c, _ = ReadYAML("prog.yaml", []byte("kind: x\ntiling: {bn: 3}\nscales: {a: 1}\n"))
	err = DecodeStrict(c, &progParams{})
	if err == nil || !strings.Contains(err.Error(), `prog.yaml:2: unknown key "tiling.bn"`) ||
		!strings.Contains(err.Error(), `prog.yaml:3: key "scales" wants a list`) {
		t.Errorf("got %v", err)
	}
	if err := DecodeStrict(c, progParams{}); err == nil {
		t.Error("DecodeStrict accepted a non-pointer")
	}
}

// FuzzLoadYAML feeds arbitrary text and --set lines to the loader: it
// must never panic or hang, its errors have a line a violation, each
// naming the file or the --set, and whatever loads must validate and
// survive a print/reload round trip. Seeds: every machine file (each
// kind), the cluster and node descriptions (not machines: refused),
// overrides. Run it with a short minimization budget (inputs start from
// the 6 KB machine files and each load costs ~1 ms):
//
//	go test ./machines -run '^$' -fuzz FuzzLoadYAML -fuzztime 60s -fuzzminimizetime 50x
func FuzzLoadYAML(f *testing.F) {
	for _, n := range Names() {
		src, _ := Source(n)
		f.Add(src, "")
	}
	for _, n := range []string{"cloudbrain2.yaml", "cloudbrain2-node.yaml"} {
		src, err := clusters.FS.ReadFile(n)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src, "")
	}
	f.Add([]byte("cores: 1\ncore: {clock: 1GHz, buffers: {L1: 1MiB}}\n"), "")
	f.Add([]byte("a: &x [*x]\n"), "")
	f.Add([]byte("a: &x {b: *x, c: *x}\n"), "")
	f.Add([]byte("core: {buffers: {L1: [1, 2]}}\n"), "")
	f.Add([]byte("? [a, b]\n: 1\n"), "")
	f.Add([]byte("gm: {bandwidth: 1e400}\nl2: {capacity: -5}\n"), "")
	f.Add([]byte("core:\n  clock: .inf\n  vector: {cycles_per_repeat: .nan}\n"), "")
	f.Add([]byte(""), "")
	a910, _ := Source("ascend-910a")
	a100, _ := Source("a100")
	f.Add(a910, "machine.core.buffers.L1=512KiB\nmachine.cores=2\nprogram.m=3")
	f.Add(a910, "machine.kind=nvidia-sm")
	f.Add(a910, "machine.core.clock=1e400Hz")
	f.Add(a100, "machine.cores=1\nmachine.core.tensor.sustained_clock={fp16: 1GHz}")
	f.Add(a100, "machine.gm.capacity=-1")
	f.Add(a910, "machine.cores=2\x1e3") // (\x1e: a newline in the value)
	f.Add(a100, "machine.core.tensor.sustained_clock={fp16:\x1e 1GHz}")
	f.Fuzz(func(t *testing.T, data []byte, sets string) {
		var ovs []Override
		if sets != "" {
			for _, s := range strings.Split(sets, "\n") {
				o, err := ParseOverride(strings.ReplaceAll(s, "\x1e", "\n")) // (\x1e in a line: a newline in the value)
				if err != nil {
					return
				}
				ovs = append(ovs, o)
			}
		}
		m, err := LoadBytes("fuzz.yaml", data, ovs)
		if err != nil {
			// One line per violation, each naming the file or the --set.
			for _, l := range strings.Split(err.Error(), "\n") {
				if !strings.Contains(l, "fuzz.yaml") && !strings.Contains(l, "--set") {
					t.Fatalf("error line %q names neither the file nor a --set (in %q)", l, err)
				}
			}
			return
		}
		if err := m.Validate(); err != nil {
			t.Fatalf("loaded machine fails validation: %v", err)
		}
		out := m.YAML(nil)
		back, err := LoadBytes("effective.yaml", out, nil)
		if err != nil {
			t.Fatalf("effective YAML does not reload: %v\n%s", err, out)
		}
		if !reflect.DeepEqual(back, m) {
			t.Fatalf("round trip differs:\n%+v\n%+v", back, m)
		}
	})
}

// TestKinds checks kind selection: a file without kind: is davinci, an
// explicit kind: davinci is the same machine, --set machine.kind is checked
// like the file key, and keys resolve against the kind's core section.
func TestKinds(t *testing.T) {
	a := mustLoad(t, "ascend-910a")
	if a.Kind != "davinci" || a.DaVinci() == nil {
		t.Fatalf("kind %q, core %T", a.Kind, a.Core)
	}
	explicit, err := LoadBytes("user.yaml", variant(t, "cores: 32", "kind: davinci\ncores: 32"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(explicit.Core, a.Core) || explicit.Kind != "davinci" {
		t.Errorf("kind: davinci differs from the default kind")
	}
	_, err = Load("ascend-910a", []Override{{Path: "machine.kind", Value: "nosuch"}})
	if err == nil || !strings.Contains(err.Error(), "--set machine.kind=nosuch") || !strings.Contains(err.Error(), `unknown machine kind "nosuch"`) {
		t.Errorf("--set machine.kind=nosuch: %v", err)
	}
	// Another kind than the file's: one line (its keys would each be unknown).
	_, err = Load("a100", []Override{{Path: "machine.kind", Value: "amd-cu"}})
	if err == nil || !strings.Contains(err.Error(), "the machine kind is the file's (nvidia-sm)") || strings.Contains(err.Error(), "\n") {
		t.Errorf("--set machine.kind=amd-cu on a100: %v", err)
	}
	if _, _, err := ResolveKey("davinci", "core.buffers.L1"); err != nil {
		t.Errorf("ResolveKey davinci core.buffers.L1: %v", err)
	}
	if _, _, err := ResolveKey("davinci", "core.smem"); err == nil {
		t.Errorf("ResolveKey davinci core.smem: no error")
	}
	g := a.Geometry()
	if len(g.Lanes) != 7 || g.Lanes[3] != "M" || g.Buffers[0].Name != "GM" || !g.Buffers[0].Global ||
		g.Buffers[0].Capacity != int64(a.GM.Capacity) || g.VectorRepeatBytes != 256 {
		t.Errorf("geometry %+v", g)
	}
	if p, ok := g.Path(4, 5); !ok || g.Lanes[p.Lane] != "V" || p.Name != "L0C_UB" { // 910A: no FixPipe
		t.Errorf("L0C→UB path %v %v", p, ok)
	}
}

func peak(m *Machine, input string) float64 {
	p, _ := m.Peak(input)
	return p
}

// A YAML NaN or infinity (.nan, .inf) in a float key is refused
// with its file, line and key, as --set refuses it.
func TestNonFiniteYAMLRefused(t *testing.T) {
	for _, v := range []string{".nan", ".inf", "-.Inf"} {
		data := variant(t, "bytes_per_cycle: 73 ", "bytes_per_cycle: "+v+" ")
		_, err := LoadBytes("user.yaml", data, nil)
		if err == nil || !strings.Contains(err.Error(), "want a finite number, got "+v) || !strings.Contains(err.Error(), "user.yaml:") {
			t.Errorf("%s: %v", v, err)
		}
	}
}

// A file whose kind: line is wrong or missing (its keys another kind's)
// gets one line naming the kind its keys are, not an unknown-key line per
// key (23 for an A100 file).
func TestWrongKindOneLine(t *testing.T) {
	src, err := Source("a100")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ text, want string }{
		{strings.Replace(string(src), "kind: nvidia-sm", "kind: davinci", 1), `key "kind": davinci, but the file's keys are kind nvidia-sm's`},
		{strings.Replace(string(src), "kind: nvidia-sm", "", 1), `key "kind": missing (so davinci), but the file's keys are kind nvidia-sm's: add kind: nvidia-sm`},
	} {
		_, err := LoadBytes("user.yaml", []byte(c.text), nil)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("error %v, want one line with %q", err, c.want)
		}
	}
}

// Several unknown keys in a file are refused in one line naming the file
// and each key with its line and hint; a section's keys are listed once,
// and a file with very many names the first few and counts the rest.
func TestUnknownKeysOneLine(t *testing.T) {
	src, err := Source("ascend-910a")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(src), "  buffers:\n", "  bufers:\n", 1)
	text = strings.Replace(text, "cores: 32\n", "corez: 32\nchips: 2\nnodes: 3\n", 1)
	_, err = LoadBytes("user.yaml", []byte(text), nil)
	if err == nil || strings.Contains(err.Error(), "\n") {
		t.Fatalf("error %v, want one line", err)
	}
	msg := err.Error()
	for _, w := range []string{"user.yaml: 4 unknown keys: line ", `"corez": the top level has no key "corez" (did you mean "cores"?)`,
		`"core.bufers.L1": "core" has no key "bufers" (did you mean "buffers"?)`, `"chips": the top level has no key "chips" (it has: `, `"nodes": the top level has no key "nodes" (did you mean "cores"?)`} {
		if !strings.Contains(msg, w) {
			t.Errorf("error %q, want %q in it", msg, w)
		}
	}
	if strings.Count(msg, "it has:") != 1 {
		t.Errorf("error %q: want the top level's keys listed once", msg)
	}

	var b strings.Builder
	b.WriteString(string(src))
	for i := range 1000 {
		fmt.Fprintf(&b, "bogus%d: 1\n", i)
	}
	_, err = LoadBytes("user.yaml", []byte(b.String()), nil)
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "user.yaml: 1000 unknown keys: ") ||
		!strings.Contains(err.Error(), "; and 992 more") || len(err.Error()) > maxUnknownMsg+50 {
		t.Errorf("error %.3000q: want one short line counting 1000 unknown keys", err)
	}
}

// A mapping of more keys than any section has is refused at once, in one
// line: go-yaml compares every key of a mapping with every other, and
// viper each top-level key with those merged before it (10^4 keys took
// 5 s, 10^5 minutes; 10^4 repeats of one key 8 GB and a crash).
func TestManyKeysRefused(t *testing.T) {
	for _, c := range []struct {
		name, text, want string
	}{
		{"top level", "kind: davinci\n" + keys("k%d: 1\n", 100000), `user.yaml:1: the top level holds 100001 keys: no section of an input file has more than 1024`},
		{"section", "kind: davinci\ncore:\n" + keys("  k%d: 1\n", 30000), `user.yaml:3: key "core" holds 30000 keys`},
		{"repeats", "kind: davinci\n" + strings.Repeat("cores: 1\n", 10000), `user.yaml:1: the top level holds 10001 keys`},
		{"fewer repeats", "kind: davinci\n" + strings.Repeat("cores: 1\n", 1000), `user.yaml:3: key "cores" given twice`},
		{"in a list entry", "kind: davinci\nx:\n  - 1\n  -\n" + keys("    k%d: 1\n", 2000), `user.yaml:5: key "x[1]" holds 2000 keys`},
	} {
		_, err := LoadBytes("user.yaml", []byte(c.text), nil)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %.300v, want one line with %q", c.name, err, c.want)
		}
	}
}

// keys is format with %d each of 0..n−1, joined.
func keys(format string, n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, format, i)
	}
	return b.String()
}

// An unknown machine's error suggests the embedded machine likely meant: a
// typo of a name, or a whole part of one; none where no name or several
// are close.
func TestUnknownMachineSuggests(t *testing.T) {
	for name, want := range map[string]string{
		"h100":    `unknown machine "h100" (did you mean "h100-sxm"?): not an embedded machine (`,
		"mi300":   `unknown machine "mi300" (did you mean "mi300x"?): `,
		"910A":    `unknown machine "910A" (did you mean "ascend-910a"?): `,
		"a10":     `unknown machine "a10" (did you mean "a100"?): `,
		"ascend":  `unknown machine "ascend": not an embedded machine (`, // (two machines)
		"nosuchx": `unknown machine "nosuchx": not an embedded machine (`,
		"":        `unknown machine "": not an embedded machine (`,
	} {
		if got := (&UnknownError{Name: name}).Error(); !strings.HasPrefix(got, want) {
			t.Errorf("%q: %s, want it to start %s", name, got, want)
		}
	}
}
