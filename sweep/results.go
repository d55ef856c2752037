package sweep

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/davinci-sim/davinci-sim/badinput"
	"github.com/davinci-sim/davinci-sim/machines"
	"github.com/davinci-sim/davinci-sim/outfile"
)

// maxLine bounds one results.jsonl line.
const maxLine = 16 << 20

// ReadResults reads a results.jsonl file written for study s and checks
// every record against the study: a complete line of valid JSON with
// exactly the record's keys, each once, a point index of the study given
// once, the point's parameter values and the study's metrics. Errors wrap
// bad input (package badinput) and name the file and line; a last line
// cut off (tornLine) is one too, saying that --resume drops it.
func ReadResults(path string, s *Study) ([]Record, error) {
	recs, tail, err := readResultsFile(path, s, nil)
	if err == nil && tail.torn > 0 {
		err = badInput(errors.New(tail.note(path, "sweep --resume drops it and runs its point again")))
	}
	return recs, err
}

// readResultsFile is ReadResults, or with stale non-nil readResults's
// leniency about run stamps; a last line cut off is returned as torn, not
// refused (readResults).
func readResultsFile(path string, s *Study, stale *int) ([]Record, resultsTail, error) {
	if err := badinput.NotPipe(path); err != nil {
		return nil, resultsTail{}, badInput(fmt.Errorf("results file: %v", err))
	}
	fh, err := os.Open(path)
	if err != nil {
		return nil, resultsTail{}, badInput(fmt.Errorf("results file: %v", err))
	}
	defer fh.Close()
	return readResults(path, fh, s, stale)
}

// resultsTail is how a results file read whole ends (readResults).
//
// Its last line may be cut off (torn): without its end of line, and not a
// JSON value. A sweep appends each record with one write of its line and
// the end of line, not synced (Run), so what a write stopped part way
// leaves — the sweep killed in it (kill -9, a job's time limit), a full
// disk, the host going down (whose file system may also keep the file's
// new length without its bytes: zeros) — is such a line, after the
// complete records: nothing of it to keep, and its point not recorded. A
// line that has its end of line, or that is a whole JSON value without
// it, was written whole, and is checked as any record is.
type resultsTail struct {
	torn int   // the line number of a last line cut off, or 0
	end  int64 // the bytes up to the end of the last record (its end of line included)
	eol  bool  // the last record, if any, ends with an end of line
}

// note is one line saying that the last line of path is cut off, and then
// (after a colon) what becomes of it.
func (t resultsTail) note(path, then string) string {
	return fmt.Sprintf("%s:%d: last line cut off (no end of line, not a whole record: a write stopped by a kill, a full disk or a crash): %s", path, t.torn, then)
}

// repair makes the results file at path, which ends as t says, and fh,
// the same file opened for appending, end with its last record and an end
// of line, for records to be appended after it: it drops a line cut off
// (and blanks after the last record) and ends an unterminated last
// record's line. (It truncates by path: on Windows a file opened with
// O_APPEND has no write access for truncating through its handle.)
func (t resultsTail) repair(path string, fh *os.File) error {
	if st, err := fh.Stat(); err != nil || st.Size() != t.end {
		if err := os.Truncate(path, t.end); err != nil {
			return err
		}
	}
	if !t.eol {
		_, err := fh.Write([]byte("\n"))
		return err
	}
	return nil
}

// readResults is ReadResults from r. With stale non-nil a record whose run
// stamp is not the study's (or that has none) is kept, counted in *stale,
// instead of refused (Redraw). A last line cut off is not an error: it is
// returned in tail (tail.torn), the records before it in recs.
func readResults(path string, r io.Reader, s *Study, stale *int) (recs []Record, tail resultsTail, err error) {
	br := bufio.NewReader(r)
	bad := func(line int, format string, a ...any) error {
		return badInput(fmt.Errorf("%s:%d: %s", path, line, fmt.Sprintf(format, a...)))
	}
	var out []Record
	seen := map[int]int{}
	var off int64 // the bytes of the lines read
	tail.eol = true
	for line := 1; ; line++ {
		text, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			var buf bytes.Buffer
			buf.Write(text)
			for errors.Is(err, bufio.ErrBufferFull) && buf.Len() <= maxLine {
				text, err = br.ReadSlice('\n')
				buf.Write(text)
			}
			if buf.Len() > maxLine {
				return nil, resultsTail{}, bad(line, "corrupt record: line longer than %d bytes", maxLine)
			}
			text = buf.Bytes()
		}
		if err == io.EOF {
			if len(bytes.TrimSpace(text)) == 0 {
				return out, tail, nil
			}
			if !json.Valid(text) {
				tail.torn = line
				return out, tail, nil
			}
			// A whole record without its end of line: checked below.
		} else if err != nil {
			return nil, resultsTail{}, badInput(fmt.Errorf("%s: %v", path, err))
		}
		off += int64(len(text))
		if len(bytes.TrimSpace(text)) == 0 {
			return nil, resultsTail{}, bad(line, "corrupt record: empty line")
		}
		var rec Record
		dec := json.NewDecoder(bytes.NewReader(text))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&rec); err != nil {
			return nil, resultsTail{}, bad(line, "corrupt record: %v", err)
		}
		// (Decoder.More says no more where a '}' or ']' follows.)
		end := dec.InputOffset()
		if len(bytes.TrimSpace(text[end:])) != 0 {
			return nil, resultsTail{}, bad(line, "corrupt record: more than the record's JSON object on the line")
		}
		if key, first, ok := dupKey(text[:end]); ok {
			if first != "" {
				return nil, resultsTail{}, bad(line, "key %q given twice (first as %q)", key, first)
			}
			return nil, resultsTail{}, bad(line, "key %q given twice", key)
		}
		if err := checkRecord(&rec, s, stale); err != nil {
			return nil, resultsTail{}, bad(line, "%v", err)
		}
		if prev, ok := seen[rec.Index]; ok {
			return nil, resultsTail{}, bad(line, "point %d is recorded twice (also on line %d)", rec.Index, prev)
		}
		seen[rec.Index] = line
		out = append(out, rec)
		tail.end = off
		if err == io.EOF {
			tail.eol = false
			return out, tail, nil
		}
	}
}

// checkRecord checks that rec belongs to study s; with stale non-nil a run
// stamp that is not the study's is counted there instead (readResults).
func checkRecord(rec *Record, s *Study, stale *int) error {
	if rec.Index < 0 || rec.Index >= len(s.Points) {
		return fmt.Errorf("key \"index\": point %d is not in the study (0..%d); the study changed? use another -o directory", rec.Index, len(s.Points)-1)
	}
	switch rec.Status {
	case StatusOK, StatusFailed, StatusCheckFailed:
	default:
		return fmt.Errorf("key \"status\": %q is not ok, failed or check-failed", rec.Status)
	}
	if t := rec.TimeLimitSeconds; t != 0 && (!(t > 0) || math.IsInf(t, 0) || rec.Status != StatusFailed) {
		return fmt.Errorf("key \"time_limit_seconds\": %v: must be a positive number of seconds, of a failed point", t)
	}
	if b := rec.HostMemoryBytes; b != 0 && (b < 0 || rec.Status != StatusFailed) {
		return fmt.Errorf("key \"host_memory_bytes\": %d: must be a positive number of bytes, of a failed point", b)
	}
	if rec.OpUnit != "" && (rec.OpUnit != OpUnit || rec.Status == StatusFailed) {
		return fmt.Errorf("key \"op_unit\": %q: only %q, of a point with metrics (integer operations; left out for floating-point ones)", rec.OpUnit, OpUnit)
	}
	if err := checkValues(rec); err != nil {
		return err
	}
	want := s.paramMap(s.Points[rec.Index])
	if !maps.Equal(rec.Params, want) {
		return fmt.Errorf("key \"params\": point %d has %s here but %s in the study; the study changed? use another -o directory",
			rec.Index, formatParams(rec.Params), formatParams(want))
	}
	err := checkStamp(rec, s)
	if err == nil {
		err = checkMetrics(rec, s)
	}
	if err != nil {
		if stale == nil {
			return err
		}
		// Kept as recorded, its metrics the study's (null where not
		// recorded), to be run again (--rerun-changed) or drawn as it is.
		*stale++
		rec.stale = true
		ms := make(map[string]json.RawMessage, len(s.Metrics))
		for _, m := range s.Metrics {
			if raw, ok := rec.Metrics[m]; ok {
				ms[m] = raw
			} else {
				ms[m] = nil
			}
		}
		rec.Metrics = ms
	}
	for _, m := range s.Metrics {
		if len(rec.Metrics[m]) == 0 {
			rec.Metrics[m] = json.RawMessage("null")
		}
	}
	return nil
}

// checkMetrics checks that rec records the study's metrics, no more.
func checkMetrics(rec *Record, s *Study) error {
	for _, m := range s.Metrics {
		if _, ok := rec.Metrics[m]; !ok {
			return fmt.Errorf("key \"metrics\": no %q recorded; the study's metrics changed? --resume --rerun-changed runs its points again, or use another -o directory", m)
		}
	}
	if len(rec.Metrics) != len(s.Metrics) {
		return fmt.Errorf("key \"metrics\": %d metrics recorded, the study has %d; the study's metrics changed? --resume --rerun-changed runs its points again, or use another -o directory", len(rec.Metrics), len(s.Metrics))
	}
	return nil
}

// encodeRecords returns recs as results.jsonl's lines.
func encodeRecords(recs []Record) ([]byte, error) {
	var b bytes.Buffer
	for _, r := range recs {
		line, err := json.Marshal(r)
		if err != nil {
			return nil, err
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.Bytes(), nil
}

func formatParams(m map[string]string) string {
	keys := slices.Sorted(maps.Keys(m))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + m[k]
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// finish rewrites results.jsonl sorted by index and writes results.csv and
// the plots; each file is replaced atomically.
func finish(s *Study, dir string, done map[int]Record, sum *Summary, log io.Writer) error {
	recs := make([]Record, 0, len(done))
	for _, i := range slices.Sorted(maps.Keys(done)) {
		recs = append(recs, done[i])
		if done[i].Status != StatusOK {
			if sum.Failed == 0 {
				sum.FirstFailure = fmt.Sprintf("point %d: %s", i, done[i].Error)
			}
			sum.Failed++
			if done[i].HostMemoryBytes > 0 {
				sum.HostMemory++
			}
		}
	}
	jb, err := encodeRecords(recs)
	if err != nil {
		return err
	}
	if err := writeAtomic(filepath.Join(dir, ResultsJSONL), jb); err != nil {
		return err
	}
	var cb bytes.Buffer
	if err := WriteCSV(&cb, s, recs); err != nil {
		return err
	}
	if err := writeAtomic(filepath.Join(dir, ResultsCSV), cb.Bytes()); err != nil {
		return err
	}
	if log != nil {
		for _, m := range nullMetrics(s, recs) {
			fmt.Fprintf(log, "metric %s: no point's report has it (%s); its column is empty\n", m, absentWhy(m))
		}
	}
	_, err = drawPlots(s, recs, dir, log)
	return err
}

// drawPlots draws study s's plots from recs into dir, concurrently
// (rendering is most of the time after the last point), and returns how
// many it drew (a plot with nothing to draw is skipped); their warnings go
// to log in study order.
func drawPlots(s *Study, recs []Record, dir string, log io.Writer) (int, error) {
	logs := make([]bytes.Buffer, len(s.Plots))
	errs := make([]error, len(s.Plots))
	drawn := make([]bool, len(s.Plots))
	var wg sync.WaitGroup
	for i, pl := range s.Plots {
		wg.Go(func() {
			var w io.Writer
			if log != nil {
				w = &logs[i]
			}
			drawn[i], errs[i] = drawPlot(s, pl, recs, dir, w)
		})
	}
	wg.Wait()
	n := 0
	for i := range s.Plots {
		if log != nil {
			log.Write(logs[i].Bytes())
		}
		if errs[i] != nil {
			return n, errs[i]
		}
		if drawn[i] {
			n++
		}
	}
	return n, nil
}

// Redraw draws study s's plots again from the records of dir's
// results.jsonl, and touches no other file. Unlike --resume it draws
// records whose run stamps are not the study's — run from other inputs or
// options, or by a davinci-sim that wrote no stamps — as they were recorded
// (nothing is run, so nothing is mixed). It returns the plots drawn (a
// plot with nothing to draw is skipped with a warning on log), the records
// that ran (not failed) and how many records were such; the records must
// still be the study's points, with its parameters and metrics. A last
// line cut off (resultsTail) is left out, with a note on log.
func Redraw(s *Study, dir string, log io.Writer) (plots, records, stale int, err error) {
	path := filepath.Join(dir, ResultsJSONL)
	recs, tail, err := readResultsFile(path, s, &stale)
	if err != nil {
		return 0, 0, 0, err
	}
	if len(recs) == 0 {
		return 0, 0, 0, badInput(fmt.Errorf("%s: no records to draw", path))
	}
	if err := s.checkOutputs(setCheck{log: log}, dir, false); err != nil {
		return 0, 0, 0, err
	}
	if tail.torn > 0 && log != nil {
		fmt.Fprintf(log, "sweep plot: %s\n", tail.note(path, "not drawn (sweep --resume -o "+dir+" drops it and runs its point again)"))
	}
	slices.SortFunc(recs, func(a, b Record) int { return a.Index - b.Index })
	for _, r := range recs {
		if r.Status != StatusFailed {
			records++
		}
	}
	if plots, err = drawPlots(s, recs, dir, log); err != nil {
		return 0, 0, 0, err
	}
	return plots, records, stale, nil
}

// nullMetrics returns the study's metrics that are null in every point
// that ran (none when no point ran): a path the reports do not have — a
// free-form section (buffers, program) accepts any key when the study is
// read.
func nullMetrics(s *Study, recs []Record) []string {
	var out []string
	for _, m := range s.Metrics {
		ran, found := false, false
		for _, r := range recs {
			if r.Status == StatusFailed {
				continue
			}
			ran = true
			if v, ok := r.Metrics[m]; ok && string(v) != "null" && len(v) > 0 {
				found = true
				break
			}
		}
		if ran && !found {
			out = append(out, m)
		}
	}
	return out
}

// writeAtomic writes data to path through a temporary file and a rename.
func writeAtomic(path string, data []byte) error {
	return outfile.Write(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteCSV writes the records (sorted by index) as CSV: index, one column
// per varied parameter, status, one column per metric, error. Numbers are
// written as in the JSON; missing metrics are empty cells.
//
// A parameter whose values are all sizes with a unit (256KiB, 1MiB) gets a
// second column, NAME_bytes, right after it: the size in bytes, for plotting
// and fitting without parsing units.
func WriteCSV(w io.Writer, s *Study, recs []Record) error {
	cw := csv.NewWriter(w)
	head := []string{"index"}
	sizes := map[string]bool{}
	for _, q := range s.Params {
		head = append(head, q)
		if sizeParam(q, recs) {
			sizes[q] = true
			head = append(head, q+"_bytes")
		}
	}
	head = append(head, "status")
	head = append(head, s.Metrics...)
	head = append(head, "error")
	if err := cw.Write(head); err != nil {
		return err
	}
	for _, r := range recs {
		row := []string{fmt.Sprint(r.Index)}
		for _, q := range s.Params {
			row = append(row, r.Params[q])
			if sizes[q] {
				n, _ := machines.ParseSize(r.Params[q])
				row = append(row, strconv.FormatInt(int64(n), 10))
			}
		}
		row = append(row, r.Status)
		for _, m := range s.Metrics {
			row = append(row, cell(r.Metrics[m]))
		}
		row = append(row, r.Error)
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// cell formats a JSON metric value for CSV: numbers as written, strings
// unquoted, null empty, anything else as compact JSON.
func cell(raw json.RawMessage) string {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" {
		return ""
	}
	if t[0] == '"' {
		var s string
		if json.Unmarshal(t, &s) == nil {
			return s
		}
	}
	return string(t)
}

// Merge combines the results.jsonl files of shard runs (each in one of
// dirs) into out: results.jsonl, results.csv and the plots, the same files
// one unsharded run writes. Records already in out/results.jsonl are kept.
// Records of the same point must agree. Points without a record are
// listed in Summary.Missing. A results file's last line cut off
// (resultsTail) is left out, its point missing, with a note on log.
func Merge(s *Study, out string, dirs []string, log io.Writer) (*Summary, error) {
	start := time.Now()
	if out == "" {
		return nil, badInput(errors.New("no output directory (-o DIR)"))
	}
	if len(dirs) == 0 {
		return nil, badInput(errors.New("merge: name the shard output directories"))
	}
	shards := make([]string, len(dirs))
	for i, d := range dirs {
		shards[i] = filepath.Join(d, ResultsJSONL)
	}
	if err := s.checkOutputs(setCheck{log: log}, out, true, shards...); err != nil {
		return nil, err
	}
	// (out is held from before its records are read until the merge is
	// written: another sweep there would lose points.)
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, badInput(fmt.Errorf("-o %s: %w", out, err))
	}
	release, err := lockOut(out)
	if err != nil {
		return nil, err
	}
	defer release()
	done := map[int]Record{}
	from := map[int]string{}
	paths := []string{}
	for i, d := range dirs {
		p := filepath.Join(d, ResultsJSONL)
		if j := slices.IndexFunc(dirs[:i], func(e string) bool { return e == d || sameFile(filepath.Join(e, ResultsJSONL), p) }); j >= 0 {
			return nil, badInput(fmt.Errorf("merge: shard directory %s given twice (as %s)", d, dirs[j]))
		}
		paths = append(paths, p)
	}
	if p := filepath.Join(out, ResultsJSONL); !slices.ContainsFunc(paths, func(q string) bool { return sameFile(p, q) }) {
		if st, err := os.Stat(p); err == nil && st.Size() > 0 {
			paths = append(paths, p)
		}
	}
	var notes []string
	for _, p := range paths {
		recs, tail, err := readResultsFile(p, s, nil)
		if err != nil {
			return nil, err
		}
		if tail.torn > 0 {
			notes = append(notes, "sweep merge: "+tail.note(p, "left out (sweep --resume -o "+filepath.Dir(p)+" drops it and runs its point again)"))
		}
		for _, r := range recs {
			if prev, ok := done[r.Index]; ok {
				a, _ := json.Marshal(prev)
				b, _ := json.Marshal(r)
				if !bytes.Equal(a, b) {
					return nil, badInput(fmt.Errorf("%s: point %d differs from its record in %s", p, r.Index, from[r.Index]))
				}
				continue
			}
			done[r.Index] = r
			from[r.Index] = p
		}
	}
	if log != nil {
		for _, n := range notes {
			fmt.Fprintln(log, n)
		}
	}
	sum := &Summary{Points: len(s.Points), Selected: len(s.Points), Skipped: len(done)}
	if err := finish(s, out, done, sum, log); err != nil {
		return sum, err
	}
	for _, p := range s.Points {
		if _, ok := done[p.Index]; !ok {
			sum.Missing = append(sum.Missing, p.Index)
		}
	}
	sum.Wall = time.Since(start)
	return sum, nil
}

func sameFile(a, b string) bool {
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	if err1 != nil || err2 != nil {
		return filepath.Clean(a) == filepath.Clean(b)
	}
	return os.SameFile(sa, sb)
}

// sizeParam reports whether every value of parameter q in recs is a size
// and at least one has a unit (plain numbers need no second column).
func sizeParam(q string, recs []Record) bool {
	unit := false
	for _, r := range recs {
		v := r.Params[q]
		if _, err := machines.ParseSize(v); err != nil {
			return false
		}
		if _, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err != nil {
			unit = true
		}
	}
	return unit
}

// absentWhy says why no report may hold metric m: the sections present
// only in some runs, else a misspelling.
func absentWhy(m string) string {
	top, _, _ := strings.Cut(strings.ToLower(m), ".")
	switch top {
	case "error", "baselines":
		return "error and baselines need the points' numerics full or sampled: timing-only runs compute no C"
	case "hplmxp":
		return "hplmxp is lu-fused's section"
	case "cluster":
		return "cluster is in runs on a cluster or node description"
	}
	return "misspelt? report.md lists the keys"
}
