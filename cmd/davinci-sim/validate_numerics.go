package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/davinci-sim/davinci-sim/cube"
)

func init() { validateSubcommands = append(validateSubcommands, newValidateNumericsCmd) }

// defaultVectorsDir is the recorded-vector folder shipped in the repository
// (Khattak & Mikaitis, BSD 2-Clause: testdata/tc-vectors/LICENCE).
const defaultVectorsDir = "testdata/tc-vectors"

// numericsRow is one line of the report (also the JSON object).
type numericsRow struct {
	GPU        string `json:"gpu"`
	Input      string `json:"input"`
	Output     string `json:"output"`
	Model      string `json:"model"`
	Checked    int    `json:"checked"`
	Mismatches int    `json:"mismatches"`
}

func newValidateNumericsCmd() *cobra.Command {
	var dir string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "numerics",
		Short: "Bit-compare the matrix-unit models with recorded GPU tensor-core outputs",
		Long: `numerics runs every recorded file set (GPU / input format / output format) of
the tensor-core vector folder through the matching model preset of package cube
(V100→v100, A100 and A2→a100, Ada and L40S→ada, H100 and H200→h100, B200→b200)
and prints, per set, the number of dot products checked and of bit mismatches.
A <GPU>/<format> folder holds a_<GPU>_<format>, b_<GPU>_<format>, c_<GPU>_fp32
and d_<GPU>_fp32 (.txt.gz), the set of FP32 results, and d_<GPU>_fp16 where
FP16 results were recorded, a second set sharing a, b and c. Every file of a
set must have as many dot products (lines) as the a file.

--vectors defaults to ` + defaultVectorsDir + `, resolved relative to the current
directory; when it is not found there, the same path is tried relative to the
repository the executable was built from (the source tree its build recorded —
not with go build -trimpath —, else the directory holding go.mod above the
executable or the current directory), and the folder used is reported.

Exit status: 0 when every bit matches, 1 when any set has mismatches, 2 when the
folder or any file of a set is missing or unreadable.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			explicit := cmd.Flags().Changed("vectors")
			resolved, note, err := resolveVectorsDir(dir, explicit)
			if err != nil {
				return badInput(err)
			}
			if note != "" {
				fmt.Fprintln(cmd.ErrOrStderr(), note)
			}
			rows, err := runNumerics(resolved)
			if err != nil {
				return badInput(err)
			}
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				if err := enc.Encode(rows); err != nil {
					return err
				}
			} else {
				tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
				fmt.Fprintln(tw, "gpu\tinput\toutput\tmodel\tchecked\tmismatches\t")
				for _, r := range rows {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t\n", r.GPU, r.Input, r.Output, r.Model, r.Checked, r.Mismatches)
				}
				tw.Flush()
			}
			total, bad, sets := 0, 0, 0
			for _, r := range rows {
				total += r.Checked
				bad += r.Mismatches
				if r.Mismatches > 0 {
					sets++
				}
			}
			if bad > 0 {
				return failure(fmt.Errorf("numerics: %d of %d dot products mismatch in %d of %d file sets", bad, total, sets, len(rows)))
			}
			if !asJSON {
				fmt.Fprintf(out, "all %d dot products of %d file sets match bit for bit\n", total, len(rows))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "vectors", defaultVectorsDir, "folder of recorded tensor-core vectors (<GPU>/<format>/{a,b,c,d}_*.txt.gz)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array of {gpu, input, output, model, checked, mismatches}")
	return cmd
}

// resolveVectorsDir returns the folder to use. An explicit --vectors must
// exist as given; the default is also tried relative to the repository that
// holds the executable (or the current directory), with a note saying so.
func resolveVectorsDir(dir string, explicit bool) (string, string, error) {
	if st, err := os.Stat(dir); err == nil && st.IsDir() {
		return dir, "", nil
	}
	if !explicit && !filepath.IsAbs(dir) {
		var starts []string
		if src := sourceDir(); src != "" {
			starts = append(starts, src)
		}
		if exe, err := os.Executable(); err == nil {
			starts = append(starts, filepath.Dir(exe))
		}
		if wd, err := os.Getwd(); err == nil {
			starts = append(starts, wd)
		}
		for _, s := range starts {
			if repo := findRepoRoot(s); repo != "" {
				cand := filepath.Join(repo, dir)
				if st, err := os.Stat(cand); err == nil && st.IsDir() {
					return cand, fmt.Sprintf("numerics: %s not found in the current directory; using %s (relative to the repository %s)", dir, cand, repo), nil
				}
			}
		}
	}
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		return "", "", fmt.Errorf("numerics: --vectors %s is a file; give the folder of recorded vectors (<GPU>/<format>/...)", dir)
	}
	return "", "", fmt.Errorf("numerics: vector folder %s not found (pass --vectors DIR)", dir)
}

// sourceDir returns the directory this file was compiled from, as the
// build recorded it ("" when it recorded none, or a path relative to the
// module: go build -trimpath): the repository a binary built elsewhere
// (go build -o /some/dir) came from.
func sourceDir() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok || !filepath.IsAbs(file) {
		return ""
	}
	return filepath.Dir(file)
}

// findRepoRoot walks up from dir to the first directory holding go.mod.
func findRepoRoot(dir string) string {
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// runNumerics checks every file set of dir. Any missing or unreadable file
// is an error naming it.
func runNumerics(dir string) ([]numericsRow, error) {
	sets, err := cube.FindVectorSets(dir)
	if err != nil {
		return nil, fmt.Errorf("numerics: %s", strings.TrimPrefix(err.Error(), "cube: vectors: ")) // (as Load's below)
	}
	if len(sets) == 0 {
		return nil, errors.New("numerics: no file sets (<GPU>/<format>/d_*.txt.gz) under " + dir)
	}
	rows := make([]numericsRow, 0, len(sets))
	for _, s := range sets {
		m, err := cube.Preset(s.Model)
		if err != nil {
			return nil, err
		}
		v, err := s.Load()
		if err != nil {
			return nil, fmt.Errorf("numerics: %s", strings.TrimPrefix(err.Error(), "cube: vectors: ")) // (a file cut short: its path, then what)
		}
		r, err := s.Check(m, v)
		if err != nil {
			return nil, fmt.Errorf("numerics: %s: %w", s.D, err)
		}
		rows = append(rows, numericsRow{GPU: s.GPU, Input: s.Input.String(), Output: s.Output.String(),
			Model: s.Model, Checked: r.Checked, Mismatches: r.Mismatches})
	}
	return rows, nil
}
