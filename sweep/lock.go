package sweep

import (
	"errors"
	"fmt"
)

// errLocked is lockDir's error when another process holds the directory.
var errLocked = errors.New("locked")

// lockOut takes the output directory dir for this process: two sweeps
// writing one directory (a job array's shards given the same -o) would
// each rewrite results.jsonl with its own points at the end, losing the
// other's. The lock is released when release is called or the process
// ends, and leaves no file behind (the directory's files are the study's
// outputs, compared as they are).
func lockOut(dir string) (release func(), err error) {
	release, err = lockDir(dir)
	if errors.Is(err, errLocked) {
		return nil, badInput(fmt.Errorf("-o %s: in use by another sweep: give each run its own directory — shards too, then sweep merge", dir))
	}
	if err != nil {
		return nil, fmt.Errorf("-o %s: locking it: %w", dir, err)
	}
	return release, nil
}
