package traces

import "fmt"

// Trace sizes, measured on the examples (hgemm, lu-fused-small, sgemm-cube
// 2048³, --numerics off): a slice takes 139–154 bytes of JSON (8–10
// gzip-compressed) and 52–67 bytes of protobuf (hgemm.yaml 66.6, sgemm-cube.yaml
// 52.6, all of the file over its slices); a counter sample ~75 bytes
// of JSON and ~12 of protobuf; a core's process and lane descriptions ~1.1
// kB of JSON and ~0.9 kB of protobuf. The estimates use the upper ends.
const (
	jsonSliceBytes     = 155
	jsonSampleBytes    = 75
	jsonCoreBytes      = 1200
	pftraceSliceBytes  = 66
	pftraceSampleBytes = 12
	pftraceCoreBytes   = 1000
)

// ViewerJSONLimit is the JSON trace size beyond which viewers fail to load
// it: chrome://tracing (catapult) reads the file into one JavaScript string
// (V8 caps strings at ~512 MiB) and needs several times that in objects;
// ui.perfetto.dev's JSON import is similar. A few hundred MB is the
// practical limit.
const ViewerJSONLimit = 256 << 20

// TraceFlagHelp describes the command line's --trace flag: the formats and
// what size to expect.
const TraceFlagHelp = `write a trace of the run: FILE.pftrace or FILE.perfetto-trace (Perfetto protobuf,
~53-67 bytes a slice: for large runs; open in ui.perfetto.dev) or FILE.json[.gz] (Chrome JSON,
~140-155 bytes a slice, gzip ~10: viewers load at most a few hundred MB of JSON;
ui.perfetto.dev or chrome://tracing; a run on a cluster or node description writes JSON only).
Slices: hgemm.yaml 19 k, sgemm-cube.yaml 0.37 M, sgemm-cube 8192³ 20 M. The run holds them until
it ends, within what --max-memory leaves beside its estimate (past it: exit 2, see --trace-window)`

// eventCounts returns the slices (host tasks included) and counter samples
// of tl.
func (tl *Timeline) eventCounts() (slices, samples int64) {
	for _, c := range tl.Cores {
		for p := range c.Lanes {
			slices += int64(c.Lanes[p].Len())
		}
		for b := range c.Occ {
			samples += int64(len(c.Occ[b]))
		}
	}
	return slices + int64(len(tl.Host)), samples + int64(len(tl.Bandwidth)) + int64(len(tl.Power))
}

// EstimateTraceBytes estimates the size of tl's trace in the format of
// path (uncompressed: what a viewer holds).
func EstimateTraceBytes(path string, tl *Timeline) int64 {
	slices, samples := tl.eventCounts()
	cores := int64(len(tl.Cores))
	if IsProtoTrace(path) {
		return slices*pftraceSliceBytes + samples*pftraceSampleBytes + cores*pftraceCoreBytes
	}
	return slices*jsonSliceBytes + samples*jsonSampleBytes + cores*jsonCoreBytes
}

// SizeWarning returns a warning to print before writing tl to path as a
// JSON trace larger than viewers load (ViewerJSONLimit), "" otherwise.
func SizeWarning(path string, tl *Timeline) string { return sizeWarning(path, tl, ViewerJSONLimit) }

// sizeWarning is SizeWarning with a given limit (bytes).
func sizeWarning(path string, tl *Timeline, limit int64) string {
	if IsProtoTrace(path) {
		return ""
	}
	n := EstimateTraceBytes(path, tl)
	if n <= limit {
		return ""
	}
	slices, _ := tl.eventCounts()
	return fmt.Sprintf("warning: %s will hold about %s of JSON (%d slices): more than chrome://tracing or ui.perfetto.dev load (a few hundred MB); write a .pftrace instead (about %s), or trace less with --trace-cores / --trace-window",
		path, megabytes(n), slices, megabytes(EstimateTraceBytes("x.pftrace", tl)))
}

// megabytes formats n bytes in MB or GB.
func megabytes(n int64) string {
	if n >= 1e9 {
		return fmt.Sprintf("%.1f GB", float64(n)/1e9)
	}
	return fmt.Sprintf("%.0f MB", float64(n)/1e6)
}
