package isa

import (
	"reflect"
	"sync"
	"testing"
)

// An instruction holds no pointer (RegionName): the arrays of them a run
// keeps are memory the garbage collector does not scan. A field that
// brings one back fails here.
func TestInstrHoldsNoPointer(t *testing.T) {
	var walk func(ty reflect.Type, path string)
	walk = func(ty reflect.Type, path string) {
		switch ty.Kind() {
		case reflect.Struct:
			for i := range ty.NumField() {
				walk(ty.Field(i).Type, path+"."+ty.Field(i).Name)
			}
		case reflect.Array:
			walk(ty.Elem(), path+"[]")
		case reflect.Pointer, reflect.String, reflect.Slice, reflect.Map, reflect.Interface, reflect.Func, reflect.Chan, reflect.UnsafePointer:
			t.Errorf("%s is a %s: an Instr must hold no pointer", path, ty.Kind())
		}
	}
	walk(reflect.TypeFor[Instr](), "Instr")
}

// Region names intern to ids that compare as the names do and give them
// back; "" is 0; concurrent callers agree.
func TestRegionNames(t *testing.T) {
	if NameRegion("") != 0 || RegionName(0).String() != "" {
		t.Fatalf("the empty name is %d, id 0 is %q", NameRegion(""), RegionName(0).String())
	}
	a, b := NameRegion("regionname-test-a"), NameRegion("regionname-test-b")
	if a == 0 || b == 0 || a == b || NameRegion("regionname-test-a") != a {
		t.Fatalf("ids %d, %d, again %d", a, b, NameRegion("regionname-test-a"))
	}
	if a.String() != "regionname-test-a" || b.String() != "regionname-test-b" {
		t.Fatalf("names %q, %q", a.String(), b.String())
	}
	ids := make([]RegionName, 8)
	var wg sync.WaitGroup
	for i := range ids {
		wg.Go(func() { ids[i] = NameRegion("regionname-test-shared") })
	}
	wg.Wait()
	for _, id := range ids {
		if id != ids[0] || id.String() != "regionname-test-shared" {
			t.Fatalf("concurrent ids %v", ids)
		}
	}
	if in := FreeIn(L1, "regionname-test-a"); in.Region.Name != a || Format(in) != "free L1 name=regionname-test-a" {
		t.Errorf("FreeIn: name %d, formatted %q", in.Region.Name, Format(in))
	}
}
