package shell

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/peterh/liner"
	"github.com/regionkv/regionkv/client"
	"github.com/regionkv/regionkv/ipc"
	"golang.org/x/term"
)

// Exit statuses of `regionsrv shell`.
const (
	exitOK      = 0
	exitFailure = 1 // a command failed (non-interactive) or the cluster could not be reached
	exitUsage   = 2
)

// HistoryFile is the interactive shell's history, in the home directory.
const HistoryFile = ".regionkv_shell_history"

const synopsis = "regionsrv shell [--zk HOST:PORT] [-D key=value ...] [-n] [-e 'COMMANDS' | FILE]"

// Main is `regionsrv shell`: it connects to the cluster registered in
// ZooKeeper and runs HBase shell commands from -e, a file, standard input,
// or (on a terminal) interactively, with line editing and history. In a
// script the first failing command ends the run with exit status 1, as
// HBase's `hbase shell -n` does.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("shell", flag.ContinueOnError)
	fs.SetOutput(stderr)
	zk := fs.String("zk", "", "ZooKeeper quorum, host:port[,host:port...] (default 127.0.0.1:2181, or hbase.zookeeper.quorum)")
	expr := fs.String("e", "", "run these commands and exit")
	nonInteractive := fs.Bool("n", false, "non-interactive: exit with status 1 at the first failing command")
	fs.BoolVar(nonInteractive, "noninteractive", false, "same as -n")
	props := map[string]string{}
	fs.Func("D", "set a property: hbase.zookeeper.quorum, hbase.zookeeper.property.clientPort, zookeeper.znode.parent, "+
		"hbase.shell.timestamp.format.epoch (repeatable)", func(s string) error {
		k, v, ok := strings.Cut(s, "=")
		if !ok || k == "" {
			return errors.Newf("-D wants key=value, got %q", s)
		}
		props[k] = v
		return nil
	})
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: %s\n", synopsis)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() > 1 || fs.NArg() == 1 && *expr != "" {
		fmt.Fprintf(stderr, "regionsrv shell: give commands with -e or in one FILE, not both\nusage: %s\n", synopsis)
		return exitUsage
	}

	var script string
	var scriptName string
	switch {
	case *expr != "":
		script, scriptName = *expr, "-e"
	case fs.NArg() == 1:
		b, err := os.ReadFile(fs.Arg(0))
		if err != nil {
			fmt.Fprintf(stderr, "regionsrv shell: %v\n", err)
			return exitFailure
		}
		script, scriptName = string(b), fs.Arg(0)
	}
	inFile, inIsFile := stdin.(*os.File)
	outFile, outIsFile := stdout.(*os.File)
	interactive := script == "" && !*nonInteractive && inIsFile && outIsFile &&
		term.IsTerminal(int(inFile.Fd())) && term.IsTerminal(int(outFile.Fd()))

	quorum := zkQuorum(*zk, props)
	opts := client.Options{ZKQuorum: quorum, ZKRoot: props["zookeeper.znode.parent"]}
	connectCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	c, err := client.New(connectCtx, opts)
	cancel()
	if err != nil {
		fmt.Fprintf(stderr, "regionsrv shell: cannot reach the cluster through ZooKeeper at %s: %v\n", quorum, err)
		return exitFailure
	}
	defer c.Close()

	sh := &Shell{c: c, out: stdout, errOut: stderr, interactive: interactive, ctx: ctx,
		epoch: props["hbase.shell.timestamp.format.epoch"] == "true", loc: time.Local, quorum: quorum}
	sh.f.out = stdout
	if outIsFile && term.IsTerminal(int(outFile.Fd())) {
		fd := int(outFile.Fd())
		sh.f.width = func() int {
			if w, _, err := term.GetSize(fd); err == nil {
				return w
			}
			return 0
		}
	}
	switch {
	case script != "":
		return sh.RunScript(scriptName, script)
	case interactive:
		return sh.interactiveLoop()
	default:
		return sh.RunStream("stdin", stdin)
	}
}

// zkQuorum is --zk, else hbase.zookeeper.quorum (with
// hbase.zookeeper.property.clientPort for hosts without a port), else
// 127.0.0.1:2181.
func zkQuorum(flagValue string, props map[string]string) string {
	if flagValue != "" {
		return flagValue
	}
	port := props["hbase.zookeeper.property.clientPort"]
	if port == "" {
		port = "2181"
	}
	hosts := props["hbase.zookeeper.quorum"]
	if hosts == "" {
		hosts = "127.0.0.1"
	}
	var out []string
	for _, h := range strings.Split(hosts, ",") {
		if h = strings.TrimSpace(h); h == "" {
			continue
		}
		if !strings.Contains(h, ":") {
			h += ":" + port
		}
		out = append(out, h)
	}
	return strings.Join(out, ",")
}

// Shell runs commands against one cluster.
type Shell struct {
	c           *client.Client
	ctx         context.Context
	out, errOut io.Writer
	f           formatter
	interactive bool
	epoch       bool // hbase.shell.timestamp.format.epoch
	loc         *time.Location
	quorum      string
	exit        bool // the exit command ran
}

// errUsage marks an error in a command's arguments: the interactive shell
// then points at the command's help, as HBase's does.
var errUsage = errors.New("usage")

func usagef(format string, args ...any) error {
	return errors.Mark(errors.Newf(format, args...), errUsage)
}

// RunScript runs a script as HBase's non-interactive shell does and
// returns the exit status: 0, or 1 at the first error (which is printed on
// stderr).
func (s *Shell) RunScript(name, src string) int {
	stmts, err := Parse(src)
	if err != nil {
		fmt.Fprintf(s.errOut, "%s: %v\n", name, err)
		return exitFailure
	}
	for _, st := range stmts {
		if err := s.Exec(st); err != nil {
			return exitFailure
		}
		if s.exit {
			break
		}
	}
	return exitOK
}

// RunStream runs commands as they arrive on r (standard input piped in),
// each as soon as its statement is complete, as HBase's shell reads a pipe;
// it stops at the first error with exit status 1.
func (s *Shell) RunStream(name string, r io.Reader) int {
	br := bufio.NewReader(r)
	var pending strings.Builder
	line, startLine := 0, 1
	for !s.exit {
		text, rerr := br.ReadString('\n')
		if rerr != nil && rerr != io.EOF {
			fmt.Fprintf(s.errOut, "regionsrv shell: reading %s: %v\n", name, rerr)
			return exitFailure
		}
		if text != "" {
			line++
			pending.WriteString(text)
		}
		eof := rerr == io.EOF
		stmts, err := Parse(pending.String())
		var se *SyntaxError
		if errors.As(err, &se) && se.Incomplete && !eof {
			continue
		}
		if err != nil {
			if se != nil {
				se.Pos.Line += startLine - 1
			}
			fmt.Fprintf(s.errOut, "%s: %v\n", name, err)
			return exitFailure
		}
		pending.Reset()
		startLine = line + 1
		for _, st := range stmts {
			if err := s.Exec(st); err != nil {
				return exitFailure
			}
			if s.exit {
				break
			}
		}
		if eof {
			break
		}
	}
	return exitOK
}

// Exec runs one statement, prints its output, its time and its result as
// HBase's shell does. The error is returned after it was printed.
func (s *Shell) Exec(st Statement) error {
	cmd, ok := commandsByName[st.Name]
	if !ok {
		err := errors.Newf("NameError: undefined local variable or method '%s' for main:Object (type help for the commands)", st.Name)
		if s.interactive {
			fmt.Fprintf(s.out, "%v\n", err)
		} else {
			fmt.Fprintf(s.errOut, "%s: %v\n", st.Pos, err)
		}
		return err
	}
	start := time.Now()
	res, err := cmd.run(s, st.Args)
	if err != nil {
		msg := s.errorMessage(st, err)
		if s.interactive {
			fmt.Fprintf(s.out, "\nERROR: %s\n\n", msg)
			fmt.Fprintf(s.out, "For usage try 'help \"%s\"'\n\n", cmd.name)
		} else {
			fmt.Fprintf(s.errOut, "ERROR: %s\n", msg)
		}
	}
	if !cmd.untimed {
		fmt.Fprintf(s.out, "Took %.4f seconds\n", time.Since(start).Seconds())
	}
	if err == nil && res != "" {
		fmt.Fprintf(s.out, "=> %s\n", res)
	}
	return err
}

// errorMessage words an error as HBase's shell does: its own messages for
// the exceptions users meet most (an unknown table, namespace or snapshot,
// a table that exists, a family that does not), Java's "class: message"
// for other server exceptions, and the error itself for the rest.
func (s *Shell) errorMessage(st Statement, err error) string {
	first := ""
	if len(st.Args) > 0 {
		if v, ok := st.Args[0].(*Str); ok {
			first = string(v.B)
		}
	}
	if e, ok := ipc.AsException(err); ok {
		switch e.Class {
		case ipc.ClassTableNotFoundException:
			return fmt.Sprintf("Unknown table %s!", first)
		case ipc.ClassNamespaceNotFoundException:
			ns, _, _ := strings.Cut(first, ":")
			return fmt.Sprintf("Unknown namespace %s!", ns)
		case ipc.ClassTableExistsException:
			return fmt.Sprintf("Table already exists: %s!", first)
		case ipc.ClassUnknownRegionException:
			return fmt.Sprintf("Unknown region %s!", first)
		case classSnapshotDoesNotExist:
			return fmt.Sprintf("Unknown snapshot %s!", first)
		case ipc.ClassNoSuchColumnFamilyException:
			if td, derr := s.c.TableDescriptor(s.ctx, first); derr == nil {
				var cols []string
				for _, f := range td.Families {
					cols = append(cols, f.Name+":*")
				}
				return "Unknown column family! Valid column names: " + strings.Join(cols, ", ")
			}
		}
		return e.Error()
	}
	return err.Error()
}

const classSnapshotDoesNotExist = "org.apache.hadoop.hbase.snapshot.SnapshotDoesNotExistException"

// interactiveLoop reads statements from the terminal with line editing and
// history until exit or end of input.
func (s *Shell) interactiveLoop() int {
	ln := liner.NewLiner()
	defer ln.Close()
	ln.SetCtrlCAborts(true)
	ln.SetMultiLineMode(true)
	ln.SetTabCompletionStyle(liner.TabPrints)
	ln.SetCompleter(func(line string) []string {
		var out []string
		for _, c := range commands {
			if strings.HasPrefix(c.name, line) {
				out = append(out, c.name)
			}
		}
		return out
	})
	histPath := ""
	if home, err := os.UserHomeDir(); err == nil {
		histPath = filepath.Join(home, HistoryFile)
		if f, err := os.Open(histPath); err == nil {
			_, _ = ln.ReadHistory(f)
			f.Close()
		}
	}
	saveHistory := func() {
		if histPath == "" {
			return
		}
		if f, err := os.OpenFile(histPath, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600); err == nil {
			_, _ = ln.WriteHistory(f)
			f.Close()
		}
	}
	defer saveHistory()

	fmt.Fprintf(s.out, "RegionKV shell (HBase shell commands); enter 'help' for the list of commands, 'exit' to leave.\n")
	fmt.Fprintf(s.out, "Connected through ZooKeeper at %s\n", s.quorum)
	lineNo := 1
	var pending strings.Builder
	for !s.exit {
		prompt := fmt.Sprintf("hbase:%03d:0> ", lineNo)
		if pending.Len() > 0 {
			prompt = fmt.Sprintf("hbase:%03d:1* ", lineNo)
		}
		line, err := ln.Prompt(prompt)
		if errors.Is(err, liner.ErrPromptAborted) {
			pending.Reset()
			continue
		}
		if err != nil { // io.EOF (Ctrl-D) or a terminal error
			fmt.Fprintln(s.out)
			break
		}
		lineNo++
		pending.WriteString(line)
		pending.WriteByte('\n')
		stmts, perr := Parse(pending.String())
		var se *SyntaxError
		if errors.As(perr, &se) && se.Incomplete {
			continue
		}
		text := strings.TrimSpace(pending.String())
		pending.Reset()
		if text != "" {
			ln.AppendHistory(strings.ReplaceAll(text, "\n", " "))
		}
		if perr != nil {
			fmt.Fprintf(s.out, "%v\n", perr)
			continue
		}
		for _, st := range stmts {
			_ = s.Exec(st) // printed; the interactive shell goes on
			if s.exit {
				break
			}
		}
		saveHistory()
	}
	return exitOK
}

// version is RegionKV's build: the module version and VCS revision Go
// recorded, in HBase's "version, rREVISION, DATE" form.
func version() string {
	v, rev, date := "(devel)", "unknown", "unknown"
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			v = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.time":
				date = s.Value
			}
		}
	}
	return fmt.Sprintf("RegionKV %s, r%s, %s", v, rev, date)
}

var tookRE = regexp.MustCompile(`Took \d+\.\d{4} seconds`)

// NormalizeTook replaces the times of "Took N seconds" lines, for
// comparing output.
func NormalizeTook(s string) string { return tookRE.ReplaceAllString(s, "Took 0.0000 seconds") }

// itoa is strconv.Itoa for the commands' messages.
func itoa(n int) string { return strconv.Itoa(n) }
