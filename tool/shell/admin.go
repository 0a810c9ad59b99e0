package shell

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/cockroachdb/errors"
)

func msDuration(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }

func sortedKeysInt(m map[string]int64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// compileJavaRegex compiles a pattern that must match a whole name, as
// Java's Pattern.matches does.
func compileJavaRegex(re string) (*regexp.Regexp, error) {
	r, err := regexp.Compile("^(?:" + re + ")$")
	if err != nil {
		return nil, usagef("bad regular expression %q: %v", re, err)
	}
	return r, nil
}

// tableOrRegion tells whether name is a table (flush, compact and split
// take a table or a region name, as in HBase).
func (s *Shell) tableOrRegion(name string) (isTable bool, err error) {
	ok, err := s.exists(name)
	if err != nil || ok {
		return ok, err
	}
	// A region name is "table,startKey,regionId[.encoded.]".
	if !strings.Contains(name, ",") {
		return false, errors.Newf("Unknown table %s!", name)
	}
	return false, nil
}

func familiesArg(args []Value) ([]string, error) {
	var fams []string
	for _, a := range args {
		f, err := nameArg("Column family", a)
		if err != nil {
			return nil, err
		}
		fams = append(fams, f)
	}
	return fams, nil
}

func cmdFlush(s *Shell, args []Value) (string, error) {
	if err := argCount(args, 1, 2); err != nil {
		return "", err
	}
	name, err := nameArg("Table or region name", args[0])
	if err != nil {
		return "", err
	}
	fams, err := familiesArg(args[1:])
	if err != nil {
		return "", err
	}
	isTable, err := s.tableOrRegion(name)
	if err != nil {
		return "", err
	}
	if isTable {
		return "", s.c.FlushTable(s.ctx, name, fams...)
	}
	if len(fams) > 0 {
		return "", errors.New("flushing one family of a region is not supported by RegionKV's client; flush the region or the table")
	}
	return "", s.c.FlushRegion(s.ctx, []byte(name))
}

func cmdCompact(major bool) func(s *Shell, args []Value) (string, error) {
	return func(s *Shell, args []Value) (string, error) {
		if err := argCount(args, 1, 3); err != nil {
			return "", err
		}
		name, err := nameArg("Table or region name", args[0])
		if err != nil {
			return "", err
		}
		var fams []string
		for _, a := range args[1:] {
			if v, ok := a.(*Str); ok && !v.Const && (string(v.B) == "NORMAL" || string(v.B) == "MOB") {
				if string(v.B) == "MOB" {
					return "", errors.New("MOB compactions are not supported: RegionKV has no MOB files")
				}
				continue
			}
			f, err := familiesArg([]Value{a})
			if err != nil {
				return "", err
			}
			fams = append(fams, f...)
		}
		isTable, err := s.tableOrRegion(name)
		if err != nil {
			return "", err
		}
		if isTable {
			return "", s.c.CompactTable(s.ctx, name, major, fams...)
		}
		return "", s.c.CompactRegion(s.ctx, []byte(name), major, fams...)
	}
}

func cmdSplit(s *Shell, args []Value) (string, error) {
	if err := argCount(args, 1, 2); err != nil {
		return "", err
	}
	name, err := nameArg("Table or region name", args[0])
	if err != nil {
		return "", err
	}
	var point []byte
	if len(args) == 2 {
		if point, err = bytesArg("Split point", args[1]); err != nil {
			return "", err
		}
		if len(point) == 0 {
			point = nil // HBase's shell: an empty split point is none
		}
	}
	isTable, err := s.tableOrRegion(name)
	if err != nil {
		return "", err
	}
	if isTable {
		return "", s.c.SplitTable(s.ctx, name, point)
	}
	return "", s.c.SplitRegion(s.ctx, []byte(name), point)
}

func cmdAssign(s *Shell, args []Value) (string, error) {
	if err := argCount(args, 1, 1); err != nil {
		return "", err
	}
	name, err := nameArg("Region name", args[0])
	if err != nil {
		return "", err
	}
	return "", s.c.AssignRegion(s.ctx, []byte(name))
}

// cmdMergeRegion is HBase 2's merge_region: two regions and an optional
// force flag, or an Array of regions (encoded or full names) and the flag.
func cmdMergeRegion(s *Shell, args []Value) (string, error) {
	if err := argCount(args, 1, -1); err != nil {
		return "", err
	}
	var names []Value
	force := false
	if arr, ok := args[0].(*Array); ok {
		if err := argCount(args, 1, 2); err != nil {
			return "", err
		}
		names = arr.Elems
		args = args[1:]
	} else {
		for len(args) > 0 {
			if _, ok := args[0].(*Bool); ok {
				break
			}
			names, args = append(names, args[0]), args[1:]
		}
	}
	if len(args) > 1 {
		return "", usagef("merge_region takes the regions, then at most a force flag")
	}
	if len(args) == 1 {
		f, err := boolArg("Force", args[0])
		if err != nil {
			return "", err
		}
		force = f
	}
	var regions [][]byte
	for _, v := range names {
		n, err := nameArg("Region name", v)
		if err != nil {
			return "", err
		}
		regions = append(regions, []byte(n))
	}
	return "", s.c.MergeRegions(s.ctx, force, regions...)
}

// switchArg reads splitormerge_switch's switch type, 'SPLIT' or 'MERGE'.
func switchArg(v Value) (split bool, err error) {
	n, err := nameArg("Switch type", v)
	if err != nil {
		return false, err
	}
	switch strings.ToUpper(n) {
	case "SPLIT":
		return true, nil
	case "MERGE":
		return false, nil
	}
	return false, usagef("Switch type %s is not SPLIT or MERGE", n)
}

func cmdSplitOrMergeSwitch(s *Shell, args []Value) (string, error) {
	if err := argCount(args, 2, 2); err != nil {
		return "", err
	}
	split, err := switchArg(args[0])
	if err != nil {
		return "", err
	}
	on, err := boolArg("Enabled", args[1])
	if err != nil {
		return "", err
	}
	set := s.c.SetMergeEnabled
	if split {
		set = s.c.SetSplitEnabled
	}
	prev, err := set(s.ctx, on)
	if err != nil {
		return "", err
	}
	s.f.header()
	s.f.row(true, fmt.Sprint(prev))
	return fmt.Sprint(prev), nil
}

func cmdSplitOrMergeEnabled(s *Shell, args []Value) (string, error) {
	if err := argCount(args, 1, 1); err != nil {
		return "", err
	}
	split, err := switchArg(args[0])
	if err != nil {
		return "", err
	}
	is := s.c.IsMergeEnabled
	if split {
		is = s.c.IsSplitEnabled
	}
	on, err := is(s.ctx)
	if err != nil {
		return "", err
	}
	s.f.header()
	s.f.row(true, fmt.Sprint(on))
	return fmt.Sprint(on), nil
}

func cmdStatus(s *Shell, args []Value) (string, error) {
	if err := argCount(args, 0, 1); err != nil {
		return "", err
	}
	format := "summary"
	if len(args) == 1 {
		f, err := nameArg("the format", args[0])
		if err != nil {
			return "", err
		}
		format = f
	}
	cs, err := s.c.ClusterStatus(s.ctx)
	if err != nil {
		return "", err
	}
	p := cs.Proto
	hostPort := func(host string, port uint32) string { return fmt.Sprintf("%s:%d", host, port) }
	switch format {
	case "summary":
		avg := 0.0
		if n := len(p.GetLiveServers()); n > 0 {
			avg = float64(cs.Regions) / float64(n)
		}
		fmt.Fprintf(s.out, "1 active master, %d backup masters, %d servers, %d dead, %.4f average load\n",
			len(p.GetBackupMasters()), len(p.GetLiveServers()), len(p.GetDeadServers()), avg)
	case "simple", "detailed":
		m := p.GetMaster()
		fmt.Fprintf(s.out, "active master:  %s %d\n", hostPort(m.GetHostName(), m.GetPort()), m.GetStartCode())
		fmt.Fprintf(s.out, "%d backup masters\n", len(p.GetBackupMasters()))
		for _, b := range p.GetBackupMasters() {
			fmt.Fprintf(s.out, "    %s %d\n", hostPort(b.GetHostName(), b.GetPort()), b.GetStartCode())
		}
		fmt.Fprintf(s.out, "%d live servers\n", len(p.GetLiveServers()))
		var load uint64
		regions := 0
		for _, ls := range p.GetLiveServers() {
			sn, sl := ls.GetServer(), ls.GetServerLoad()
			fmt.Fprintf(s.out, "    %s %d\n", hostPort(sn.GetHostName(), sn.GetPort()), sn.GetStartCode())
			var stores, files, fileMB, memMB uint32
			for _, rl := range sl.GetRegionLoads() {
				stores += rl.GetStores()
				files += rl.GetStorefiles()
				fileMB += rl.GetStorefileSize_MB()
				memMB += rl.GetMemStoreSize_MB()
			}
			fmt.Fprintf(s.out, "        requestsPerSecond=%.1f, numberOfOnlineRegions=%d, usedHeapMB=%d, maxHeapMB=%d, "+
				"numberOfStores=%d, numberOfStorefiles=%d, storefileSizeMB=%d, memstoreSizeMB=%d, "+
				"readRequestsCount=%d, writeRequestsCount=%d\n",
				float64(sl.GetNumberOfRequests()), len(sl.GetRegionLoads()), sl.GetUsedHeap_MB(), sl.GetMaxHeap_MB(),
				stores, files, fileMB, memMB, sl.GetReadRequestsCount(), sl.GetWriteRequestsCount())
			if format == "detailed" {
				for _, rl := range sl.GetRegionLoads() {
					fmt.Fprintf(s.out, "        %s\n", rubyQuote(rl.GetRegionSpecifier().GetValue()))
					fmt.Fprintf(s.out, "            numberOfStores=%d, numberOfStorefiles=%d, storefileSizeMB=%d, "+
						"memstoreSizeMB=%d, readRequestsCount=%d, writeRequestsCount=%d\n",
						rl.GetStores(), rl.GetStorefiles(), rl.GetStorefileSize_MB(), rl.GetMemStoreSize_MB(),
						rl.GetReadRequestsCount(), rl.GetWriteRequestsCount())
				}
			}
			load += sl.GetNumberOfRequests()
			regions += len(sl.GetRegionLoads())
		}
		fmt.Fprintf(s.out, "%d dead servers\n", len(p.GetDeadServers()))
		for _, d := range p.GetDeadServers() {
			fmt.Fprintf(s.out, "    %s,%d,%d\n", d.GetHostName(), d.GetPort(), d.GetStartCode())
		}
		fmt.Fprintf(s.out, "Aggregate load: %d, regions: %d\n", load, regions)
	default:
		return "", usagef("status takes 'summary', 'simple' or 'detailed', got %q", format)
	}
	return "", nil
}

func cmdVersion(s *Shell, args []Value) (string, error) {
	if err := argCount(args, 0, 0); err != nil {
		return "", err
	}
	fmt.Fprintln(s.out, version())
	return "", nil
}

func cmdExit(s *Shell, args []Value) (string, error) {
	s.exit = true
	return "", nil
}

func cmdHelp(s *Shell, args []Value) (string, error) {
	if err := argCount(args, 0, 1); err != nil {
		return "", err
	}
	if len(args) == 0 {
		s.generalHelp()
		return "", nil
	}
	name, err := nameArg("the command or group", args[0])
	if err != nil {
		return "", err
	}
	if c, ok := commandsByName[name]; ok {
		fmt.Fprint(s.out, c.help)
		return "", nil
	}
	found := false
	for _, g := range groups {
		if g.name != name {
			continue
		}
		found = true
		fmt.Fprintf(s.out, "Command group: %s\n%s\n", g.name, g.doc)
		for _, c := range commands {
			if c.group == g.name {
				fmt.Fprintf(s.out, "\nCommand: %s\n%s", c.name, c.help)
			}
		}
	}
	if !found {
		return "", usagef("no command or command group %q; type help for the list", name)
	}
	return "", nil
}

func (s *Shell) generalHelp() {
	fmt.Fprintf(s.out, "RegionKV shell, %s\n", version())
	fmt.Fprint(s.out, `Type 'help "COMMAND"' (e.g. 'help "get"'; the quotes are needed) for help on one command,
or 'help "GROUP"' (e.g. 'help "dml"') for the commands of a group.

COMMAND GROUPS:
`)
	for _, g := range groups {
		var names []string
		for _, c := range commands {
			if c.group == g.name {
				names = append(names, c.name)
			}
		}
		fmt.Fprintf(s.out, "  Group name: %s\n  Commands: %s\n\n", g.name, strings.Join(names, ", "))
	}
	fmt.Fprint(s.out, `SHELL USAGE:
Commands are HBase shell commands and take HBase's arguments, written as Ruby literals.
Quote table, row and column names: 'single' or "double" quotes. Separate arguments
with commas; end a command with a new line or ';'. Options are Ruby hashes,

  {'key1' => 'value1', KEY2 => 2, ...}

in curly braces, with '=>' between each key and its value. Keys are usually constants
such as NAME, VERSIONS, COMPRESSION, STARTROW or LIMIT, which need no quotes. Lists are
arrays in brackets: ['c1', 'c2']. Trailing KEY => value arguments need no braces.

Binary rows and values go in double quotes with escapes, as HBase's shell takes them:

  hbase> get 't1', "key\x03\x3f\xcd"
  hbase> put 't1', "test\xef\xff", 'f1:', "\x01\x33\x40"

and print with non-printable bytes as \xNN. Only these Ruby literals are understood:
no variables, table references (t.put) or Ruby expressions.

regionsrv shell -e 'COMMANDS', regionsrv shell FILE and standard input run commands
without a prompt and stop at the first error with exit status 1.
`)
}
