package main

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/davinci-sim/davinci-sim/outfile"
	"github.com/davinci-sim/davinci-sim/version"
)

// subcommands holds the constructors of the top-level commands other than
// version and validate; each command's file appends itself in an init func,
// so adding a command touches only its own file.
var subcommands []func() *cobra.Command

// validateSubcommands holds the constructors of `validate` subcommands.
var validateSubcommands []func() *cobra.Command

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "davinci-sim",
		Short: "Cycle-level simulator of AI-accelerator matrix engines (Ascend DaVinci, NVIDIA Tensor Cores, AMD Matrix Cores) running real programs bit-accurately",
		Long: `davinci-sim simulates AI-accelerator matrix engines and their memory paths:
Ascend DaVinci AI cores (cube, vector and scalar units, MTE/FixPipe data movers,
L1/L0A/L0B/L0C/UB buffers), NVIDIA SMs with Tensor Cores and AMD CDNA compute
units with Matrix Cores (CTA/workgroup grids, shared memory/LDS pipelines, L2
and HBM), and hosts and clusters of them. It executes real programs (emulated
FP32 GEMM schemes, FP64 GEMM from INT8 slices, fused blocked LU, hand-written
assembly, microbenchmarks) with bit-accurate arithmetic and reports time, stalls
by cause, buffer occupancy, energy and numerical error from the same run.

Start with "davinci-sim programs" (the program kinds and their examples) and
"davinci-sim machines" (the embedded machines).`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version.String(),
	}
	root.SetVersionTemplate("davinci-sim {{.Version}}\n")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return badInput(flagError(err)) })
	prof := &profiles{}
	root.PersistentFlags().StringVar(&prof.cpu, "cpuprofile", "", "write a CPU profile of the command to this file (go tool pprof; in place at the end, none when the command refuses its input)")
	root.PersistentFlags().StringVar(&prof.mem, "memprofile", "", "write a heap profile (allocations, and what is live) at the end of the command to this file (go tool pprof; none when the command refuses its input)")
	root.PersistentPreRunE = func(cmd *cobra.Command, args []string) error {
		if err := refuseEmptyFlags(cmd); err != nil {
			return err
		}
		if prof.mem != "" && prof.cpu != "" && filepath.Clean(prof.mem) == filepath.Clean(prof.cpu) {
			return badInput(fmt.Errorf("--cpuprofile and --memprofile: both write %s; give each its own file", prof.cpu))
		}
		if err := checkProfilesOutside(cmd, prof); err != nil {
			return badInput(err)
		}
		if _, ok := cmd.Annotations[deferProfiles]; ok {
			// The command checks its outputs first (a profile must not
			// take the place of a file they refuse), then starts them.
			cmd.SetContext(context.WithValue(cmd.Context(), profileStarter{}, prof.start))
			return nil
		}
		return prof.start()
	}
	cobra.OnFinalize(prof.finish)
	root.AddCommand(newVersionCmd())
	for _, mk := range subcommands {
		root.AddCommand(mk())
	}
	validate := newValidateCmd()
	for _, mk := range validateSubcommands {
		validate.AddCommand(mk())
	}
	root.AddCommand(validate)
	root.SetHelpCommand(newHelpCmd())
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.HasSubCommands() {
			requireSubcommand(c)
		}
	}
	registerCompletions(root)
	refuseRepeatedFlags(root)
	recordOutcome(root, &prof.outcome)
	explainArgs(root)
	return root
}

// newHelpCmd is "help [command]": the command's help, and for a name that
// is no command (cobra's own printed "Unknown help topic" and the root's
// usage, exit 0) one line naming the commands there are, exit 2.
func newHelpCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "help [command]",
		Short: "Help about any command",
		Long:  "Help prints the help of any command: davinci-sim help run, davinci-sim help sweep merge.",
		Args:  cobra.ArbitraryArgs,
		ValidArgsFunction: func(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			cmd, rest, err := c.Root().Find(args)
			if err != nil || len(rest) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			var names []cobra.Completion
			for _, sub := range cmd.Commands() {
				if sub.IsAvailableCommand() && strings.HasPrefix(sub.Name(), toComplete) {
					names = append(names, sub.Name())
				}
			}
			return names, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(c *cobra.Command, args []string) error {
			cmd, rest, err := c.Root().Find(args)
			if err != nil || len(rest) > 0 {
				parent := c.Root()
				if err == nil {
					parent = cmd
				}
				var names []string
				for _, sub := range parent.Commands() {
					if sub.IsAvailableCommand() {
						names = append(names, sub.Name())
					}
				}
				switch {
				case parent == c.Root():
					return badInput(fmt.Errorf("help: no command %q (one of: %s)", strings.Join(args, " "), strings.Join(names, ", ")))
				case len(names) == 0:
					return badInput(fmt.Errorf("help: %s has no subcommands (davinci-sim help %s)", parent.CommandPath(), parent.Name()))
				}
				return badInput(fmt.Errorf("help: %s has no subcommand %q (one of: %s)", parent.CommandPath(), strings.Join(rest, " "), strings.Join(names, ", ")))
			}
			cmd.InitDefaultHelpFlag()
			return cmd.Help()
		},
	}
}

// flagError rewords pflag's error for a bad flag value ("invalid argument
// "abc" for "--seed" flag: strconv.ParseInt: parsing "abc": invalid
// syntax") as the flag, its value and what it must be.
func flagError(err error) error {
	var iv *pflag.InvalidValueError
	if !errors.As(err, &iv) {
		return err
	}
	what := iv.Unwrap().Error()
	var rep *repeatedFlag
	if errors.As(iv, &rep) {
		if iv.GetFlag().NoOptDefVal != "" { // a switch: --x --x=false
			return fmt.Errorf("--%s: given twice, as %s and %s: give it once", iv.GetFlag().Name, rep.first, rep.then)
		}
		return fmt.Errorf("--%s: %s", iv.GetFlag().Name, what)
	}
	if iv.GetFlag().Value.Type() == "duration" { // (time's own "time: missing unit in duration "5"" named no flag)
		what = "must be a duration with a unit, e.g. 30m or 90s"
		if durationShape.MatchString(iv.GetValue()) {
			what = "out of range (at most 2562047h)"
		}
	}
	var ne *strconv.NumError
	if errors.As(iv, &ne) {
		switch {
		case errors.Is(ne.Err, strconv.ErrRange):
			what = "out of range"
		case ne.Func == "ParseInt" || ne.Func == "ParseUint":
			what = "must be an integer"
		case ne.Func == "ParseFloat":
			what = "must be a number"
		case ne.Func == "ParseBool":
			what = "must be true or false"
		}
	}
	return fmt.Errorf("--%s %q: %s", iv.GetFlag().Name, iv.GetValue(), what)
}

// durationShape matches what time.ParseDuration parses, whatever the
// size: a value of that shape it refuses is out of range.
var durationShape = regexp.MustCompile(`^[-+]?((\d+(\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h))+$`)

// explainArgs makes every command of c's tree say, when its arguments are
// wrong in number, which command and what it takes (cobra's own "accepts 1
// arg(s), received 0" named neither).
func explainArgs(c *cobra.Command) {
	if check := c.Args; check != nil {
		c.Args = func(cmd *cobra.Command, args []string) error {
			if err := check(cmd, args); err != nil {
				msg := err.Error()
				if name := strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" "); !strings.HasPrefix(msg, name+":") {
					msg = name + ": " + msg
				}
				if len(args) > 0 && cmd.HasSubCommands() { // a subcommand mistyped: sweep plt
					if cmd.SuggestionsMinimumDistance <= 0 {
						cmd.SuggestionsMinimumDistance = 2 // (cobra's own default, set where it suggests)
					}
					if sug := cmd.SuggestionsFor(args[0]); len(sug) > 0 {
						msg += fmt.Sprintf(" (did you mean %s %s?)", cmd.Name(), sug[0])
					}
				}
				return badInput(fmt.Errorf("%s (usage: %s)", msg, cmd.UseLine()))
			}
			return nil
		}
	}
	for _, sub := range c.Commands() {
		explainArgs(sub)
	}
}

// recordOutcome makes every command of c's tree store the error its RunE
// returns in *out (the profiles' finish reads it: cobra's finalizers are
// not told).
func recordOutcome(c *cobra.Command, out *error) {
	if run := c.RunE; run != nil {
		c.RunE = func(cmd *cobra.Command, args []string) error {
			err := run(cmd, args)
			*out = err
			return err
		}
	}
	for _, sub := range c.Commands() {
		recordOutcome(sub, out)
	}
}

// profiles are the files of --cpuprofile and --memprofile. Each is
// written to a temporary file beside its destination while the command
// runs and renamed over it at the end — or removed when the command
// refused its input (exit code 2): a refused command leaves no profile
// behind and touches no file a profile would replace (a previous run's
// report.json named by mistake).
type profiles struct {
	cpu, mem       string // the destinations ("": none)
	cpuTmp, memTmp *outfile.Pending
	outcome        error // what the command returned
}

// start creates the temporary files and starts the CPU profile. On an
// error it leaves no file behind.
func (p *profiles) start() error {
	var err error
	if p.mem != "" {
		if p.memTmp, err = createBeside(p.mem); err != nil {
			return badInput(fmt.Errorf("--memprofile: %w", err))
		}
	}
	if p.cpu == "" {
		return nil
	}
	if p.cpuTmp, err = createBeside(p.cpu); err != nil {
		p.discard()
		return badInput(fmt.Errorf("--cpuprofile: %w", err))
	}
	if err := pprof.StartCPUProfile(p.cpuTmp); err != nil {
		p.discard()
		return failure(fmt.Errorf("--cpuprofile: %w", err))
	}
	return nil
}

// createBeside starts the output file path (outfile.Create), refusing a
// destination that is not a regular file.
func createBeside(path string) (*outfile.Pending, error) {
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	} else if err == nil && st.Size() > 0 && !isProfile(path) {
		// (A study, its results, a shard being merged: a profile given
		// their name by mistake replaced them, in every command.)
		return nil, fmt.Errorf("%s: the file exists and is not a profile (pprof's gzip-compressed protocol buffer); give a new file, or an earlier profile's, to replace", path)
	}
	f, err := outfile.Create(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // (the temporary file's name would only confuse)
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// isProfile reports whether the file at path is a pprof profile as Go
// writes one: a gzip stream whose data starts with a protocol buffer's
// field tag — one of the profile message's fields 1…15, a varint or
// length-delimited (Go starts a CPU profile with time_nanos, 0x48, a heap
// profile with period_type, 0x5a; a gzip-compressed JSON trace starts
// with { or [, wire type 3).
func isProfile(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		return false
	}
	var b [1]byte
	_, err = io.ReadFull(z, b[:])
	field, wire := b[0]>>3, b[0]&7
	return err == nil && field >= 1 && field <= 15 && (wire == 0 || wire == 2)
}

// finish stops the CPU profile, writes the heap profile and renames both
// into place — or removes them, when the command refused its input.
func (p *profiles) finish() {
	if p.cpuTmp != nil {
		pprof.StopCPUProfile()
	}
	if exitCode(p.outcome) == 2 {
		p.discard()
		return
	}
	if p.memTmp != nil {
		runtime.GC()
		if err := pprof.Lookup("allocs").WriteTo(p.memTmp, 0); err != nil {
			fmt.Fprintln(os.Stderr, "davinci-sim: --memprofile:", err)
			p.memTmp.Abort()
			p.memTmp = nil
		}
	}
	for _, f := range []struct {
		flag string
		tmp  **outfile.Pending
	}{{"--cpuprofile", &p.cpuTmp}, {"--memprofile", &p.memTmp}} {
		if *f.tmp == nil {
			continue
		}
		if err := (*f.tmp).Commit(); err != nil {
			fmt.Fprintf(os.Stderr, "davinci-sim: %s: %v\n", f.flag, err)
		}
		*f.tmp = nil
	}
}

// discard closes and removes the temporary profile files (the CPU
// profile stopped first).
func (p *profiles) discard() {
	for _, f := range []**outfile.Pending{&p.cpuTmp, &p.memTmp} {
		if *f != nil {
			(*f).Abort()
			*f = nil
		}
	}
}

// deferProfiles is the annotation of a command that starts the
// --cpuprofile and --memprofile files itself, once its own output checks
// have passed (startProfiles), rather than before it runs.
const deferProfiles = "davinci-sim/defer-profiles"

// profileStarter is the context key of the function that starts the
// profiles of a command annotated deferProfiles.
type profileStarter struct{}

// startProfiles starts the profiles of cmd, a command annotated
// deferProfiles (nothing when none is asked for).
func startProfiles(cmd *cobra.Command) error {
	if start, ok := cmd.Context().Value(profileStarter{}).(func() error); ok {
		return start()
	}
	return nil
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the davinci-sim version (also: --version)",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, args []string) {
			fmt.Fprintln(cmd.OutOrStdout(), "davinci-sim", version.String())
		},
	}
}

func newValidateCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "validate",
		Short: "Validate models against recorded hardware data",
		Long: `Check the simulator's models against data recorded on real hardware, one
check per subcommand: numerics bit-compares the matrix-unit models (the cube
presets) with tensor-core outputs recorded on GPUs.

Exit codes are the check's: 0 the models agree with the data, 1 they do not
(mismatches), 2 bad input (data missing or unreadable); 2 also when no check,
or an unknown one, is named.`,
		Example: `  davinci-sim validate numerics`,
	}
}

// requireSubcommand makes c, a command that only groups subcommands
// (validate, completion), refuse to run without one or with a name that is
// none of them (cobra prints the help and exits 0 there, as if the command
// had done its work), in one line naming them. A command of its own (sweep
// runs a study; sweep merge is its subcommand) is left as it is.
func requireSubcommand(c *cobra.Command) {
	if c.Runnable() && c.Name() != "validate" {
		return
	}
	c.Args = cobra.ArbitraryArgs
	c.RunE = func(cmd *cobra.Command, args []string) error {
		var names []string
		for _, sub := range cmd.Commands() {
			if sub.IsAvailableCommand() {
				names = append(names, sub.Name())
			}
		}
		what := map[string]string{"validate": "check"}[cmd.Name()]
		if what == "" {
			what = "subcommand"
		}
		if len(args) > 0 { // a subcommand would have matched
			return badInput(fmt.Errorf("%s: unknown %s %q (one of: %s)", cmd.Name(), what, args[0], strings.Join(names, ", ")))
		}
		return badInput(fmt.Errorf("%s: name a %s: %s (davinci-sim %s --help)", cmd.Name(), what, strings.Join(names, ", "), cmd.Name()))
	}
}

// refuseEmptyFlags refuses a string flag given an empty value (-o "",
// -m ""): each one's "" is its default, so the run would silently ignore it.
func refuseEmptyFlags(cmd *cobra.Command) error {
	var err error
	cmd.Flags().Visit(func(fl *pflag.Flag) {
		if err == nil && fl.Value.Type() == "string" && fl.Value.String() == "" {
			err = badInput(fmt.Errorf("--%s '': an empty value (give one, or leave the flag out for its default)", fl.Name))
		}
	})
	return err
}

// refuseRepeatedFlags makes every flag of one value, in cmd and the
// commands under it, refuse to be given twice: -m a100 -m t4 ran on the
// t4, --trace a --trace b wrote b alone — the last silently kept, where
// --set refuses a key given twice. Flags that take many (--set, --cores
// lists given as one) are left as they are.
func refuseRepeatedFlags(cmd *cobra.Command) {
	wrap := func(fl *pflag.Flag) {
		t := fl.Value.Type()
		if _, done := fl.Value.(*onceValue); done || strings.HasSuffix(t, "Slice") || strings.HasSuffix(t, "Array") || t == "count" || strings.HasPrefix(t, "stringTo") {
			return
		}
		fl.Value = &onceValue{Value: fl.Value}
	}
	cmd.Flags().VisitAll(wrap)
	cmd.PersistentFlags().VisitAll(wrap)
	for _, c := range cmd.Commands() {
		refuseRepeatedFlags(c)
	}
}

// onceValue is a flag's value that refuses a second setting
// (refuseRepeatedFlags).
type onceValue struct {
	pflag.Value
	given bool
	first string
}

// Set sets the value the first time; a second time it refuses, naming both
// (flagError words it), but for the same value again — no conflict, and
// cobra's completion parses the flags twice.
func (v *onceValue) Set(s string) error {
	if v.given {
		if s == v.first {
			return nil
		}
		return &repeatedFlag{first: v.first, then: s}
	}
	v.given, v.first = true, s
	return v.Value.Set(s)
}

// repeatedFlag is onceValue's refusal of a second value.
type repeatedFlag struct{ first, then string }

func (e *repeatedFlag) Error() string {
	return fmt.Sprintf("given twice (%q, then %q): give it once", e.first, e.then)
}
