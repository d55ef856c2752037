package isa

import "sync"

// RegionName is a region's name (Region.Name), interned, so that an
// instruction holds no pointer: the arrays of instructions a run keeps —
// its streams' chunks and read-ahead rings, every block slot's lane
// queues (an MI300X GEMM's ~5000 slots: ~100 MB) — are then memory the
// garbage collector neither scans nor types at allocation. Names are
// compared as ids; 0 is no name. An id means nothing outside this
// process (ids follow the order names were first seen).
type RegionName uint32

// regionNames is the intern table: each name seen, by id − 1, and the id
// of each.
var regionNames struct {
	sync.RWMutex
	ids   map[string]RegionName
	names []string
}

// NameRegion returns the id of name s ("": 0, no name).
func NameRegion(s string) RegionName {
	if s == "" {
		return 0
	}
	t := &regionNames
	t.RLock()
	id, ok := t.ids[s]
	t.RUnlock()
	if ok {
		return id
	}
	t.Lock()
	defer t.Unlock()
	if id, ok := t.ids[s]; ok {
		return id
	}
	if t.ids == nil {
		t.ids = map[string]RegionName{}
	}
	t.names = append(t.names, s)
	id = RegionName(len(t.names))
	t.ids[s] = id
	return id
}

// String returns the name ("" for none).
func (n RegionName) String() string {
	if n == 0 {
		return ""
	}
	t := &regionNames
	t.RLock()
	defer t.RUnlock()
	return t.names[n-1]
}
