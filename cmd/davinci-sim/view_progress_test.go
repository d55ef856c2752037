package main

import (
	"bytes"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe for one writer and one reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// view prints a progress line while it reads a trace (on a terminal: a
// 5 M-event JSON trace took minutes with nothing on the screen): how much
// of the file is read, rewritten in place and cleared when done; a file
// read within the first interval prints nothing.
func TestViewReadProgress(t *testing.T) {
	var out syncBuffer
	var n atomic.Int64
	n.Store(3 << 20)
	stop := readProgress(&out, "big.json", 12<<20, &n, time.Millisecond)
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(out.String(), "reading big.json: 3.0 MiB of 12.0 MiB (25 %)") && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	stop()
	got := out.String()
	if !strings.Contains(got, "\r\033[K  reading big.json: 3.0 MiB of 12.0 MiB (25 %)") || !strings.HasSuffix(got, "\r\033[K") {
		t.Errorf("progress %q: want the line, then cleared", got)
	}
	var quiet syncBuffer
	readProgress(&quiet, "small.json", 100, &n, time.Hour)()
	if quiet.String() != "" {
		t.Errorf("a read shorter than the interval printed %q", quiet.String())
	}
}
