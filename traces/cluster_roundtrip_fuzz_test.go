package traces

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/davinci-sim/davinci-sim/sim"
)

// FuzzClusterRoundTrip checks the round-trip property (roundtrip_test.go)
// on cluster traces derived from the fuzzer's bytes — FuzzRoundTrip makes
// chip timelines only: up to four ranks, tracks of every category (a
// span's own, its track's, none), spans overlapping on a track or of no
// length, messages, a rank filter (untraced_ranks), a window cutting
// spans and a record limit (dropped_records) — written by
// WriteClusterJSON and read back by ReadTrace as clusterView says.
func FuzzClusterRoundTrip(f *testing.F) {
	// Every rank and track, every category, overlapping spans, one of no
	// length, messages.
	var all []byte
	for i := range 24 {
		all = append(all, clusterSpanOp(byte(i%3), byte(i), byte(5+i%7), byte(i), byte(i), byte(i))...)
		if i%5 == 4 {
			all = append(all, clusterMessageOp(1, byte(i), 9, byte(i+1), 0, byte(i))...)
		}
	}
	f.Add(append([]byte{0x03}, all...))
	// Rank 2 alone, in a window of [10ns, 211ns) that cuts spans.
	f.Add(append([]byte{0x53, 2, 10, 50}, all...))
	// A limit of 5 records: the rest dropped.
	f.Add(append([]byte{0x23, 4}, all...))
	f.Fuzz(func(t *testing.T, data []byte) {
		b := rtBytes(data)
		h := b.next()
		nr := 1 + int(h%4)
		ns := sim.Nanosecond
		ct := &ClusterTrace{Machine: "cloudbrain2-node", Program: "lu-fused",
			Tracks: []string{"host", "main", "fusion"}, TrackCats: []string{"host", "kernel", ""}}
		for r := range nr {
			ct.Ranks = append(ct.Ranks, fmt.Sprintf("rank %d", r))
		}
		if h&0x10 != 0 {
			ct.Only = map[int]bool{int(b.next()) % nr: true}
		}
		if h&0x20 != 0 {
			ct.Limit = 1 + int(b.next()%16)
		}
		if h&0x40 != 0 {
			ct.From = sim.Time(b.next()) * ns
			ct.To = ct.From + sim.Time(b.next())*ns*4 + 1
		}
		// (No instruction class's name: a track holding only such spans
		// reads back as a pipe's lane, whose slices may not overlap —
		// ClusterSpan.Cat; the fuzzer's first find.)
		cats := []string{"", "compute", "launch", "transfer", "wait", "host", "collective", "kernel"}
		var now sim.Time
		for op := 0; op < rtMaxOps && len(b) > 0; op++ {
			c := b.next()
			now += sim.Time(c>>4) * ns
			r, d := int(b.next())%nr, sim.Time(b.next())*ns
			if c%4 == 3 {
				ct.AddMessage(ClusterMessage{From: r, To: int(b.next()) % nr, Track: int(b.next() % 3), Sent: now, Arrived: now + d, Name: rtNames[int(b.next())%len(rtNames)]})
				continue
			}
			ct.AddSpan(ClusterSpan{Rank: r, Track: int(b.next() % 3), Name: rtNames[int(b.next())%len(rtNames)], Cat: cats[int(b.next())%len(cats)], From: now, To: now + d})
		}
		var js bytes.Buffer
		if err := WriteClusterJSON(&js, ct); err != nil {
			t.Fatal(err)
		}
		got, err := ReadTrace(&js)
		if err != nil {
			t.Fatalf("a written cluster trace does not read back: %v", err)
		}
		var n rtCount
		compareViews(t, "cluster fuzz", clusterView(ct), readView(got), &n)
	})
}

// clusterSpanOp encodes a span op of FuzzClusterRoundTrip: the clock's
// advance (ns), rank, duration (ns), track, name and category (each
// taken modulo its choices).
func clusterSpanOp(adv, rank, dur, track, name, cat byte) []byte {
	return []byte{adv << 4, rank, dur, track, name, cat}
}

// clusterMessageOp encodes a message op of FuzzClusterRoundTrip: the
// clock's advance, the sender, the time in flight (ns), the receiver, the
// track and the name.
func clusterMessageOp(adv, from, dur, to, track, name byte) []byte {
	return []byte{adv<<4 | 3, from, dur, to, track, name}
}
