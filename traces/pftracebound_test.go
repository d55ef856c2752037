package traces

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// pfMsg appends fields to a protobuf message: (num, uint64) varints,
// (num, []byte) length-delimited.
func pfMsg(fs ...any) []byte {
	var b []byte
	for i := 0; i < len(fs); i += 2 {
		num := protowire.Number(fs[i].(int))
		switch v := fs[i+1].(type) {
		case int:
			b = protowire.AppendTag(b, num, protowire.VarintType)
			b = protowire.AppendVarint(b, uint64(v))
		case []byte:
			b = protowire.AppendTag(b, num, protowire.BytesType)
			b = protowire.AppendBytes(b, v)
		case string:
			b = protowire.AppendTag(b, num, protowire.BytesType)
			b = protowire.AppendString(b, v)
		}
	}
	return b
}

// pfPacket is a Trace.packet field holding p.
func pfPacket(p []byte) []byte { return pfMsg(fTracePacket, p) }

// readPftraceBounded reads the .pftrace data, checking it allocates at
// most bound, and returns the error (nil: the trace read).
func readPftraceBounded(t *testing.T, data []byte, bound uint64) error {
	t.Helper()
	before := heapAllocated()
	_, _, err := readPftrace(bytes.NewReader(data), ReadLimits{})
	n := heapAllocated() - before
	t.Logf("%d bytes of input: %d KB allocated", len(data), n>>10)
	if n > bound {
		t.Errorf("reading allocated %d MiB, want at most %d", n>>20, bound>>20)
	}
	if err != nil && strings.Contains(err.Error(), "\n") {
		t.Errorf("error not one line: %q", err)
	}
	return err
}

// TestPftraceTruncatedPacketBounded: a file of 5 bytes claiming a packet
// of maxPacket is refused without allocating the packet (it allocated 64
// MiB): the buffer grows with the bytes the file holds.
func TestPftraceTruncatedPacketBounded(t *testing.T) {
	err := readPftraceBounded(t, protowire.AppendVarint([]byte{0x0a}, maxPacket), 4<<20)
	if err == nil || !strings.Contains(err.Error(), "unexpected EOF") {
		t.Errorf("got %v, want an unexpected EOF", err)
	}
	// A packet larger than packetChunk still reads whole.
	name := strings.Repeat("x", 3*packetChunk+17)
	data := pfPacket(pfMsg(fPacketTrackDesc, pfMsg(fTrackUUID, 1, fTrackName, name)))
	if err := readPftraceBounded(t, data, 32<<20); err != nil {
		t.Errorf("a %d-byte packet: %v", len(data), err)
	}
}

// TestPftraceRepeatedHeaderRefused: the writers write one trace header;
// each read expands its idle_cores (up to 2^16 cores), so 512 KB of
// repeated headers took 3 min 40 s and 54 GB allocated. A second one is
// refused in a line naming the packet's byte.
func TestPftraceRepeatedHeaderRefused(t *testing.T) {
	js := `{"generator":"` + generator + `","idle_cores":"0-65535"}`
	meta := pfMsg(fBundleMetadata, pfMsg(fMetadataName, metadataName, fMetadataJSONData, js))
	first := pfPacket(pfMsg(fPacketChromeEvents, meta))
	if err := readPftraceBounded(t, first, 32<<20); err != nil {
		t.Fatalf("one header: %v", err)
	}
	for _, c := range []struct {
		what string
		data []byte
		off  int
	}{
		{"in one packet", pfPacket(pfMsg(fPacketChromeEvents, bytes.Repeat(meta, 100))), 0},
		{"in packets", bytes.Repeat(first, 100), len(first)},
	} {
		err := readPftraceBounded(t, c.data, 32<<20)
		want := fmt.Sprintf("a second trace header (in the packet at byte %d;", c.off)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", c.what, err, want)
		}
	}
}

// TestPftraceOpenSlicesBounded: slices begun and never ended are held
// until their end (~130 bytes each, for ~12 bytes of file): 16 MB of
// begins on a host lane took 5 s and 430 MB. More than maxOpenSlices open
// at once (the writers' traces have at most 2) are refused, naming the
// packet's byte.
func TestPftraceOpenSlicesBounded(t *testing.T) {
	seq := pfPacket(pfMsg(fPacketSequenceID, 1, fPacketSequenceFlags, seqIncrementalStateCleared))
	for _, c := range []struct {
		what string
		desc []byte
	}{
		{"host lane", pfMsg(fTrackUUID, 7, fTrackRank, 0, fTrackThread, pfMsg(fThreadPid, HostPid))},
		{"kernel lane", pfMsg(fTrackUUID, 7, fTrackRank, 0, fTrackThread, pfMsg(fThreadPid, KernelsPid))},
	} {
		var b bytes.Buffer
		b.Write(pfPacket(pfMsg(fPacketTrackDesc, c.desc)))
		b.Write(seq)
		begin := pfPacket(pfMsg(fPacketTimestamp, 1, fPacketSequenceID, 1, fPacketTrackEvent, pfMsg(fEventType, typeSliceBegin, fEventTrackUUID, 7)))
		for range 4 * maxOpenSlices {
			b.Write(begin)
		}
		err := readPftraceBounded(t, b.Bytes(), 48<<20)
		off := b.Len() - 3*maxOpenSlices*len(begin)
		want := fmt.Sprintf("trace packet %d: more than %d slices open at once (begun, not ended) in the packet at byte %d", 2+maxOpenSlices, maxOpenSlices, off)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", c.what, err, want)
		}
	}
}
