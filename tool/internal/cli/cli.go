// Package cli is the command-line plumbing that regionsrv's file printers
// (tool/hfileprint, tool/walprint) share, so that they parse, report usage
// and fail the same way: `regionsrv NAME [flags] PATH`, errors on stderr
// prefixed "regionsrv NAME: ", and the same exit statuses (ExitOK,
// ExitFailure, ExitUsage).
//
// A FlagSet is used by one goroutine, as flag.FlagSet is.
package cli

import (
	"flag"
	"fmt"
	"io"
)

// Exit statuses of the tools.
const (
	ExitOK      = 0
	ExitFailure = 1 // the tool ran and failed (a bad file, an I/O error)
	ExitUsage   = 2 // the command line was wrong; nothing was done
)

// FlagSet is the command line of `regionsrv NAME [flags] PATH`: a
// flag.FlagSet (define the tool's flags on it) that reports to stderr.
type FlagSet struct {
	*flag.FlagSet
	name   string
	stderr io.Writer
}

// NewFlagSet returns the flag set of `regionsrv name`. Its usage message,
// on stderr, is "usage: regionsrv name synopsis" and the flags' defaults.
func NewFlagSet(name, synopsis string, stderr io.Writer) *FlagSet {
	fs := &FlagSet{FlagSet: flag.NewFlagSet(name, flag.ContinueOnError), name: name, stderr: stderr}
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: regionsrv %s %s\n", name, synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// ParsePath parses args, which must leave exactly one argument, the path,
// and returns it. ok is false if they do not: the problem and the usage are
// already on stderr, and the tool should exit with ExitUsage. -help does
// the same (exit 2), as these tools always have: hfile's -h is a flag of
// its own.
func (fs *FlagSet) ParsePath(args []string) (path string, ok bool) {
	if err := fs.Parse(args); err != nil {
		return "", false
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return "", false
	}
	return fs.Arg(0), true
}

// Reportf writes "regionsrv NAME: " and the message as one line to stderr.
func (fs *FlagSet) Reportf(format string, args ...any) {
	fmt.Fprintf(fs.stderr, "regionsrv %s: %s\n", fs.name, fmt.Sprintf(format, args...))
}

// Fail reports err as "regionsrv NAME: err" and returns ExitFailure.
func (fs *FlagSet) Fail(err error) int {
	fs.Reportf("%v", err)
	return ExitFailure
}
