// Package cli is the command-line plumbing that regionsrv's tools share, so
// that they parse, report usage and fail the same way: `regionsrv NAME
// [flags] ARGS`, errors on stderr prefixed "regionsrv NAME: ", a bad
// command line answered with the problem and one line pointing to --help
// (not the whole usage), --help printing the usage and exiting 0, and the
// same exit statuses (ExitOK, ExitFailure, ExitUsage).
//
// A FlagSet is used by one goroutine, as flag.FlagSet is.
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// Exit statuses of the tools.
const (
	ExitOK      = 0
	ExitFailure = 1 // the tool ran and failed (a bad file, an I/O error)
	ExitUsage   = 2 // the command line was wrong; nothing was done
)

// FlagSet is the command line of `regionsrv NAME [flags] ARGS`: a
// flag.FlagSet (define the tool's flags on it) that reports to stderr.
type FlagSet struct {
	*flag.FlagSet
	name   string
	stderr io.Writer
}

// NewFlagSet returns the flag set of `regionsrv name`. Its usage message
// (Usage, and what --help prints) is "usage: regionsrv name synopsis" and
// the flags' defaults.
func NewFlagSet(name, synopsis string, stderr io.Writer) *FlagSet {
	fs := &FlagSet{FlagSet: flag.NewFlagSet(name, flag.ContinueOnError), name: name, stderr: stderr}
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: regionsrv %s %s\n", name, synopsis)
		fs.SetOutput(stderr)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
	return fs
}

// Parse parses args. ok is false if the tool should not run; exit is then
// its exit status: ExitOK after --help (the usage is on stderr), ExitUsage
// for a bad flag (reported, with a pointer to --help).
func (fs *FlagSet) Parse(args []string) (exit int, ok bool) {
	usage := fs.Usage
	// The flag package prints its error and calls Usage for both a bad
	// flag and -help; which it was is only known from the error.
	fs.Usage = func() {}
	fs.SetOutput(io.Discard)
	err := fs.FlagSet.Parse(args)
	fs.Usage = usage
	switch {
	case errors.Is(err, flag.ErrHelp):
		fs.Usage()
		return ExitOK, false
	case err != nil:
		return fs.UsageError("%v", err), false
	}
	return ExitOK, true
}

// ParsePath parses args, which must leave exactly one argument, the path,
// and returns it. ok is false if they do not, or after --help: the tool
// should exit with exit. (hfile's -h is a flag of its own; -help and
// --help are help.)
func (fs *FlagSet) ParsePath(args []string) (path string, exit int, ok bool) {
	if exit, ok := fs.Parse(args); !ok {
		return "", exit, false
	}
	if fs.NArg() != 1 {
		return "", fs.UsageError("want one path, got %s", DescribeArgs(fs.Args())), false
	}
	return fs.Arg(0), ExitOK, true
}

// DescribeArgs says what arguments a command line had, for an error:
// "no arguments", "1 argument: a", "2 arguments: a b".
func DescribeArgs(args []string) string {
	switch len(args) {
	case 0:
		return "no arguments"
	case 1:
		return "1 argument: " + args[0]
	}
	return fmt.Sprintf("%d arguments: %s", len(args), strings.Join(args, " "))
}

// UsageError reports a bad command line, "regionsrv NAME: problem" and a
// line pointing to --help, and returns ExitUsage.
func (fs *FlagSet) UsageError(format string, args ...any) int {
	fs.Reportf(format, args...)
	fmt.Fprintf(fs.stderr, "Run 'regionsrv %s --help' for usage.\n", fs.name)
	return ExitUsage
}

// Reportf writes "regionsrv NAME: " and the message as one line to stderr.
func (fs *FlagSet) Reportf(format string, args ...any) {
	fmt.Fprintf(fs.stderr, "regionsrv %s: %s\n", fs.name, fmt.Sprintf(format, args...))
}

// Fail reports err as "regionsrv NAME: err" and returns ExitFailure. An
// error that starts with the tool's own name (the hfile package's "hfile
// PATH: ...") does not repeat it.
func (fs *FlagSet) Fail(err error) int {
	msg := err.Error()
	for _, p := range []string{fs.name + ": ", fs.name + " "} {
		if rest, ok := strings.CutPrefix(msg, p); ok && rest != "" {
			msg = rest
			break
		}
	}
	fs.Reportf("%s", msg)
	return ExitFailure
}
