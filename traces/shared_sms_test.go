package traces_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/davinci-sim/davinci-sim/arch"
	"github.com/davinci-sim/davinci-sim/programs"
	"github.com/davinci-sim/davinci-sim/traces"
)

// A GPU trace whose kernels have more blocks than the SMs it shows says
// so in otherData (shared_sms, naming them): where an SM runs several
// CTAs at once its lanes show one CTA's instruction at a time, so that a
// sum over the slices falls short of report.json's (b200-ozaki 512³:
// 5881 of 11041 copy instructions had a slice, and nothing in the file
// said so). A trace whose grids have a block an SM has none; both read
// back with it as a note (Timeline.Notes), which view shows.
func TestSharedSMsInHeader(t *testing.T) {
	f, opts := exampleProgram(t, "a100-hgemm.yaml")
	opts.Numerics = programs.NumericsOff
	for _, double := range []bool{false, true} {
		rec := traces.NewRecorder(traces.Window{})
		res, err := programs.Execute(f, opts, programs.RunHooks{Observer: rec})
		if err != nil {
			t.Fatal(err)
		}
		sms := 0
		for _, c := range rec.Timeline().Cores {
			sms = max(sms, c.ID+1)
		}
		gs := []arch.GridTimes{{Name: "k", CTAs: sms, Launched: 0, Started: 1, Finished: res.Stats.Time}}
		if double {
			gs[0].CTAs = 2 * sms
		}
		rec.SetKernels(gs)
		rec.Finish(res.Stats.Time)
		var buf bytes.Buffer
		if err := traces.WritePerfetto(&buf, rec.Timeline()); err != nil {
			t.Fatal(err)
		}
		var doc struct {
			OtherData map[string]any `json:"otherData"`
		}
		if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		got, _ := doc.OtherData["shared_sms"].(string)
		tl, err := traces.ReadTrace(&buf)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case !double && (got != "" || len(tl.Notes) != 0):
			t.Errorf("%d blocks on %d SMs: shared_sms %q, notes %q; want none", sms, sms, got, tl.Notes)
		case double && !strings.HasPrefix(got, "k "+itoa(2*sms)+" blocks (more than the "+itoa(sms)+" SMs the trace shows)"):
			t.Errorf("%d blocks on %d SMs: shared_sms %q", 2*sms, sms, got)
		case double && (len(tl.Notes) != 1 || !strings.HasPrefix(tl.Notes[0], "CTAs may share SMs: k ")):
			t.Errorf("read back: notes %q", tl.Notes)
		}
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
