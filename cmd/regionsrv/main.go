// Command regionsrv is RegionKV's binary: the region server and the
// operator's tools named after HBase's. It only parses the command line:
// serve calls server/, the tools are the packages under tool/.
//
//	regionsrv serve [--config hbase-site.xml] [-D k=v ...] [--data-dir DIR] [--standalone | --zk HOST:PORT | --no-zookeeper]
//	regionsrv hfile [-p] [-m] [-s] [-b] [-h] [-k] [-e] FILE   # like `hbase hfile` (tool/hfileprint)
//	regionsrv wal [-p] FILE|DIR                               # like `hbase wal` (tool/walprint)
//	regionsrv pe [options] COMMAND NCLIENTS                   # like `hbase pe --nomapred` (tool/pe)
//	regionsrv shell [--zk HOST:PORT] [-e CMDS | FILE]         # like `hbase shell` (tool/shell)
//	regionsrv bulkload [--zk HOST:PORT] [--copy] DIR TABLE     # like `hbase completebulkload` (tool/bulkload)
//	regionsrv export [--zk HOST:PORT | --dir DATA_DIR] --table T --out DIR [--snapshot S]   # HFiles for completebulkload (tool/export)
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/regionkv/regionkv/tool/bulkload"
	"github.com/regionkv/regionkv/tool/export"
	"github.com/regionkv/regionkv/tool/hfileprint"
	"github.com/regionkv/regionkv/tool/pe"
	"github.com/regionkv/regionkv/tool/shell"
	"github.com/regionkv/regionkv/tool/walprint"
)

type command struct {
	name  string
	usage string
	run   func(args []string, stdout, stderr io.Writer) int
}

var commands = []command{
	{"serve", "run the region server (HBase's client protocol, hbase:meta, ZooKeeper registration)", runServe},
	{"hfile", "print an HFile's cells, metadata, index and blocks (like `hbase hfile`)", hfileprint.Main},
	{"wal", "print a WAL segment's or directory's entries (like `hbase wal`)", walprint.Main},
	{"pe", "run a performance evaluation against an embedded region (like `hbase pe --nomapred`)", runPE},
	{"shell", "run HBase shell commands against a cluster, interactively or from a script (like `hbase shell`)", runShell},
	{"export", "write a table, from a snapshot, as HFiles for HBase's completebulkload, with its descriptor", runExport},
	{"bulkload", "load a directory of HFiles (DIR/<family>/<hfile>) into a table, splitting them at its regions (like `hbase completebulkload`)", runBulkLoad},
}

// runExport is `regionsrv export`. SIGINT stops it; what it made (the
// output directory, a temporary snapshot and table) is removed.
func runExport(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	return export.Main(ctx, args, stdout, stderr)
}

// runShell is `regionsrv shell`, reading commands from the terminal,
// -e, a file or standard input.
func runShell(args []string, stdout, stderr io.Writer) int {
	return shell.Main(context.Background(), args, os.Stdin, stdout, stderr)
}

// runBulkLoad is `regionsrv bulkload`; SIGINT stops it between steps (the
// files not yet loaded stay in DIR).
func runBulkLoad(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	return bulkload.Main(ctx, args, stdout, stderr)
}

// runPE is `regionsrv pe`. SIGINT ends the run early with the summary of
// what it did (exit 130) instead of killing the process.
func runPE(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	return pe.Main(ctx, args, stdout, stderr)
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: regionsrv COMMAND [options]")
	fmt.Fprintln(w, "commands:")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.usage)
	}
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	for _, c := range commands {
		if c.name == args[0] {
			return c.run(args[1:], stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "regionsrv: unknown command %q\n", args[0])
	fmt.Fprintln(stderr, "Run 'regionsrv help' for the commands.")
	return 2
}
