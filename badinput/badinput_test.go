package badinput

import (
	"errors"
	"fmt"
	"testing"
)

func TestWrap(t *testing.T) {
	base := errors.New("prog.yaml:3: key \"m\": must be > 0")
	err := Wrap(base)
	if err.Error() != base.Error() {
		t.Errorf("message changed: %q", err)
	}
	if !Is(err) || !Is(fmt.Errorf("run: %w", err)) || !errors.Is(err, base) {
		t.Errorf("Is/errors.Is do not see through the mark")
	}
	if Is(base) || Is(nil) || Wrap(nil) != nil {
		t.Errorf("unmarked errors or nil taken as bad input")
	}
}
