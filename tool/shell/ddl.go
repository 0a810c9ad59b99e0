package shell

import (
	"bufio"
	"context"
	"fmt"
	"math/big"
	"os"
	"sort"
	"strings"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/client"
	"github.com/regionkv/regionkv/ipc"
)

// exists reports whether a table exists.
func (s *Shell) exists(table string) (bool, error) {
	_, err := s.c.TableState(s.ctx, table)
	if err == nil {
		return true, nil
	}
	if client.IsException(err, ipc.ClassTableNotFoundException) {
		return false, nil
	}
	return false, err
}

// mustExist is HBase's admin.rb tableExists check.
func (s *Shell) mustExist(table string) error {
	ok, err := s.exists(table)
	if err != nil {
		return err
	}
	if !ok {
		return errors.Newf("Table %s does not exist.", table)
	}
	return nil
}

func (s *Shell) enabled(table string) (bool, error) {
	st, err := s.c.TableState(s.ctx, table)
	if err != nil {
		return false, err
	}
	return st == client.TableEnabled, nil
}

// Family attributes whose values HBase's shell upper-cases.
var upperAttrs = map[string]bool{"BLOOMFILTER": true, "COMPRESSION": true, "KEEP_DELETED_CELLS": true,
	"COMPRESSION_COMPACT": true, "COMPRESSION_COMPACT_MAJOR": true, "COMPRESSION_COMPACT_MINOR": true,
	"IN_MEMORY_COMPACTION": true, "MOB_COMPACT_PARTITION_POLICY": true, "DATA_BLOCK_ENCODING": true}

// familyKeys are the column family attributes HBase's shell sets (hcd in
// admin.rb); any other key in a family's hash is reported and ignored, as
// HBase does.
var familyKeys = map[string]bool{}

func init() {
	for k := range familyReserved {
		familyKeys[k] = true
	}
}

// familyOf applies a family hash ({NAME => 'f', VERSIONS => 3, ...}) to
// base (the family as the table has it, or an empty one).
func (s *Shell) familyOf(h *Hash, base *client.Family) (client.Family, error) {
	o, err := optionsOf(h)
	if err != nil {
		return client.Family{}, err
	}
	nv, _ := o.get("NAME")
	name, err := nameArg("Column family NAME", nv)
	if err != nil {
		return client.Family{}, usagef("Column family %s must have a name", inspect(h))
	}
	f := client.Family{Name: name, Attributes: map[string]string{}, Configuration: map[string]string{}}
	if base != nil {
		for k, v := range base.Attributes {
			f.Attributes[k] = v
		}
		for k, v := range base.Configuration {
			f.Configuration[k] = v
		}
	}
	for i, kv := range h.Keys {
		key := string(kv.(*Str).B)
		switch key {
		case "NAME":
			continue
		case "METADATA":
			o.get(key)
			if err := stringMap(key, h.Vals[i], f.Attributes); err != nil {
				return f, err
			}
			continue
		case "CONFIGURATION":
			o.get(key)
			if err := stringMap(key, h.Vals[i], f.Configuration); err != nil {
				return f, err
			}
			continue
		}
		if !familyKeys[key] {
			continue
		}
		v, _ := o.get(key)
		if v == nil {
			delete(f.Attributes, key)
			continue
		}
		sv, err := stringValue(key, v)
		if err != nil {
			return f, err
		}
		if upperAttrs[key] {
			sv = strings.ToUpper(sv)
		}
		f.Attributes[key] = sv
	}
	for _, k := range o.unknown() {
		fmt.Fprintf(s.out, "Unknown argument ignored for column family %s: %s\n", name, k)
	}
	return f, nil
}

func stringMap(what string, v Value, into map[string]string) error {
	h, ok := v.(*Hash)
	if !ok {
		return usagef("%s must be a Hash, got %s", what, inspect(v))
	}
	for i, k := range h.Keys {
		ks, err := stringValue(what+" key", k)
		if err != nil {
			return err
		}
		if _, isNil := h.Vals[i].(*Nil); isNil {
			delete(into, ks)
			continue
		}
		vs, err := stringValue(what+" value", h.Vals[i])
		if err != nil {
			return err
		}
		into[ks] = vs
	}
	return nil
}

// Table attributes create and alter set (HBase's table_att keys).
var tableKeys = []string{"OWNER", "MAX_FILESIZE", "READONLY", "COMPACTION_ENABLED", "SPLIT_ENABLED", "MERGE_ENABLED",
	"MEMSTORE_FLUSHSIZE", "DURABILITY", "REGION_REPLICATION", "NORMALIZATION_ENABLED", "NORMALIZER_TARGET_REGION_COUNT",
	"NORMALIZER_TARGET_REGION_SIZE_MB", "PRIORITY", "FLUSH_POLICY", "SPLIT_POLICY", "REGION_MEMSTORE_REPLICATION"}

// tableOptions applies table attributes from o to td.
func tableOptions(o *options, td *client.TableDescriptor) error {
	if td.Attributes == nil {
		td.Attributes = map[string]string{}
	}
	for _, k := range tableKeys {
		if v, ok := o.get(k); ok {
			sv, err := stringValue(k, v)
			if err != nil {
				return err
			}
			if k == "DURABILITY" {
				sv = strings.ToUpper(sv)
			}
			td.Attributes[k] = sv
		}
	}
	if v, ok := o.get("METADATA"); ok {
		if err := stringMap("METADATA", v, td.Attributes); err != nil {
			return err
		}
	}
	if _, ok := o.get("CONFIGURATION"); ok {
		return errors.New("a table's CONFIGURATION map is not supported by RegionKV's client; set CONFIGURATION on a column family")
	}
	return nil
}

func cmdCreate(s *Shell, args []Value) (string, error) {
	if err := argCount(args, 2, -1); err != nil {
		return "", err
	}
	table, err := tableArg(args[0])
	if err != nil {
		return "", err
	}
	td := client.TableDescriptor{Name: table}
	var splits [][]byte
	// Arrays are flattened, as HBase does.
	var flat []Value
	for _, a := range args[1:] {
		if arr, ok := a.(*Array); ok {
			flat = append(flat, arr.Elems...)
		} else {
			flat = append(flat, a)
		}
	}
	addFamily := func(f client.Family) {
		for i := range td.Families {
			if td.Families[i].Name == f.Name {
				fmt.Fprintf(s.out, "Family '%s' already exists, the old one will be replaced\n", f.Name)
				td.Families[i] = f
				return
			}
		}
		td.Families = append(td.Families, f)
	}
	for _, a := range flat {
		switch a := a.(type) {
		case *Str:
			if a.Const {
				return "", usagef("%s is not a column family; quote family names", a.B)
			}
			addFamily(client.Family{Name: string(a.B)})
		case *Hash:
			if _, ok := a.Get("NAME"); ok {
				f, err := s.familyOf(a, nil)
				if err != nil {
					return "", err
				}
				addFamily(f)
				continue
			}
			o, err := optionsOf(a)
			if err != nil {
				return "", err
			}
			if v, ok := o.get("METHOD"); ok {
				if m, _ := stringValue("METHOD", v); m != "table_att" {
					return "", usagef("table_att is currently the only supported method")
				}
			}
			if sp, err := splitsOf(o); err != nil {
				return "", err
			} else if sp != nil {
				splits = sp
			}
			if err := tableOptions(o, &td); err != nil {
				return "", err
			}
			for _, k := range o.unknown() {
				fmt.Fprintf(s.out, "An argument ignored (unknown or overridden): %s\n", k)
			}
		default:
			return "", usagef("%s is not of Hash or String type", inspect(a))
		}
	}
	if len(td.Families) == 0 {
		return "", usagef("Table must have at least one column family")
	}
	if err := s.c.CreateTable(s.ctx, td, splits); err != nil {
		return "", err
	}
	fmt.Fprintf(s.out, "Created table %s\n", table)
	return "Hbase::Table - " + table, nil
}

// splitsOf reads SPLITS, SPLITS_FILE or NUMREGIONS with SPLITALGO.
func splitsOf(o *options) ([][]byte, error) {
	if v, ok := o.get("SPLITS_FILE"); ok {
		path, err := stringValue("SPLITS_FILE", v)
		if err != nil {
			return nil, err
		}
		f, err := os.Open(path)
		if err != nil {
			return nil, errors.Newf("Splits file %s doesn't exist", path)
		}
		defer f.Close()
		var out [][]byte
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if line := strings.TrimSpace(sc.Text()); line != "" {
				out = append(out, toBytesBinary([]byte(line)))
			}
		}
		return out, errors.Wrapf(sc.Err(), "reading %s", path)
	}
	if v, ok := o.get("SPLITS"); ok {
		list, err := stringList("SPLITS", v)
		if err != nil {
			return nil, err
		}
		out := make([][]byte, len(list))
		for i, b := range list {
			out[i] = toBytesBinary(b)
		}
		return out, nil
	}
	nv, hasN := o.get("NUMREGIONS")
	av, hasA := o.get("SPLITALGO")
	if !hasN && !hasA {
		return nil, nil
	}
	if !hasN {
		return nil, usagef("Number of regions must be specified")
	}
	if !hasA {
		return nil, usagef("Split algorithm must be specified")
	}
	n, err := intArg("NUMREGIONS", nv)
	if err != nil {
		return nil, err
	}
	if n <= 1 {
		return nil, usagef("Number of regions must be greater than 1")
	}
	if n > 10000 {
		return nil, usagef("NUMREGIONS %d is more than this shell pre-splits (10000)", n)
	}
	algo, err := stringValue("SPLITALGO", av)
	if err != nil {
		return nil, err
	}
	return splitPoints(algo, int(n))
}

// splitPoints are the split keys of HBase's RegionSplitter algorithms.
func splitPoints(algo string, n int) ([][]byte, error) {
	short := algo[strings.LastIndexAny(algo, ".$")+1:]
	var out [][]byte
	switch short {
	case "HexStringSplit", "DecimalStringSplit":
		// The range first..last, inclusive, cut into n equal parts; the
		// keys are written in the range's base and width.
		last, base, width := big.NewInt(0xFFFFFFFF), 16, 8
		if short == "DecimalStringSplit" {
			last, base = big.NewInt(99999999), 10
		}
		rng := new(big.Int).Add(last, big.NewInt(1))
		size := new(big.Int).Div(rng, big.NewInt(int64(n)))
		for i := 1; i < n; i++ {
			k := new(big.Int).Mul(size, big.NewInt(int64(i))).Text(base)
			out = append(out, []byte(strings.Repeat("0", width-len(k))+k))
		}
	case "UniformSplit":
		// 8-byte keys spaced evenly over 0x00.. to 0xFF..: Bytes.split.
		max := new(big.Int).SetUint64(^uint64(0))
		step := new(big.Int).Div(max, big.NewInt(int64(n)))
		for i := 1; i < n; i++ {
			k := new(big.Int).Mul(step, big.NewInt(int64(i))).FillBytes(make([]byte, 8))
			out = append(out, k)
		}
	default:
		return nil, usagef("unknown SPLITALGO %s (HexStringSplit, DecimalStringSplit or UniformSplit)", algo)
	}
	return out, nil
}

func cmdAlter(s *Shell, args []Value) (string, error) {
	if err := argCount(args, 2, -1); err != nil {
		return "", err
	}
	table, err := tableArg(args[0])
	if err != nil {
		return "", err
	}
	if ok, err := s.exists(table); err != nil {
		return "", err
	} else if !ok {
		return "", errors.Newf("Can't find a table: %s", table)
	}
	td, err := s.c.TableDescriptor(s.ctx, table)
	if err != nil {
		return "", err
	}
	find := func(name string) int {
		for i := range td.Families {
			if td.Families[i].Name == name {
				return i
			}
		}
		return -1
	}
	for _, a := range args[1:] {
		var h *Hash
		switch a := a.(type) {
		case *Str:
			h = &Hash{Keys: []Value{&Str{B: []byte("NAME")}}, Vals: []Value{a}}
		case *Hash:
			h = a
			if v, ok := a.Get("delete"); ok { // alter 't', 'delete' => 'f'
				h = &Hash{Keys: []Value{&Str{B: []byte("METHOD")}, &Str{B: []byte("NAME")}}, Vals: []Value{&Str{B: []byte("delete")}, v}}
			}
		default:
			return "", usagef("%s is not of Hash or String type", inspect(a))
		}
		mv, hasMethod := h.Get("METHOD")
		method := ""
		if hasMethod {
			if method, err = stringValue("METHOD", mv); err != nil {
				return "", err
			}
		}
		_, hasName := h.Get("NAME")
		switch {
		case !hasMethod && hasName:
			nv, _ := h.Get("NAME")
			name, err := nameArg("Column family NAME", nv)
			if err != nil {
				return "", err
			}
			i := find(name)
			var base *client.Family
			if i >= 0 {
				base = &td.Families[i]
			}
			f, err := s.familyOf(h, base)
			if err != nil {
				return "", err
			}
			if i >= 0 {
				td.Families[i] = f
			} else {
				td.Families = append(td.Families, f)
			}
		case method == "delete":
			nv, _ := h.Get("NAME")
			name, err := nameArg("NAME parameter for the delete method", nv)
			if err != nil {
				return "", err
			}
			i := find(name)
			if i < 0 {
				return "", errors.Newf("Family '%s' does not exist in table %s", name, table)
			}
			td.Families = append(td.Families[:i], td.Families[i+1:]...)
		case method == "table_att_unset":
			nv, _ := h.Get("NAME")
			names, err := stringList("NAME parameter for the table_att_unset method", nv)
			if err != nil {
				return "", err
			}
			for _, n := range names {
				if _, ok := td.Attributes[string(n)]; !ok {
					return "", errors.Newf("Could not find attribute: %s", n)
				}
				delete(td.Attributes, string(n))
			}
		case method == "" || method == "table_att":
			if hasName {
				return "", usagef("NAME argument in an unexpected place")
			}
			o, err := optionsOf(h)
			if err != nil {
				return "", err
			}
			o.get("METHOD")
			if err := tableOptions(o, &td); err != nil {
				return "", err
			}
			for _, k := range o.unknown() {
				fmt.Fprintf(s.out, "Unknown argument ignored: %s\n", k)
			}
		default:
			return "", usagef("Unknown method: %s", method)
		}
	}
	if len(td.Families) == 0 {
		return "", errors.New("a table must keep at least one column family")
	}
	if err := s.c.ModifyTable(s.ctx, td); err != nil {
		return "", err
	}
	// ModifyTable returns once every region has the new descriptor.
	regions, err := s.c.Regions(s.ctx, table)
	if err != nil {
		return "", err
	}
	fmt.Fprintln(s.out, "Updating all regions with the new schema...")
	fmt.Fprintf(s.out, "%d/%d regions updated.\n", len(regions), len(regions))
	fmt.Fprintln(s.out, "Done.")
	return "", nil
}

func cmdDescribe(s *Shell, args []Value) (string, error) {
	if err := argCount(args, 1, 1); err != nil {
		return "", err
	}
	table, err := tableArg(args[0])
	if err != nil {
		return "", err
	}
	td, err := s.c.TableDescriptor(s.ctx, table)
	if err != nil {
		return "", err
	}
	en, err := s.enabled(table)
	if err != nil {
		return "", err
	}
	state := "DISABLED"
	if en {
		state = "ENABLED"
	}
	s.f.header("Table " + table + " is " + state)
	s.f.row(true, table+tableAttributes(td.Attributes))
	s.f.header("COLUMN FAMILIES DESCRIPTION")
	fams := append([]client.Family(nil), td.Families...)
	sort.Slice(fams, func(i, j int) bool { return fams[i].Name < fams[j].Name })
	for _, f := range fams {
		s.f.row(true, describeFamily(f.Name, f.Attributes, f.Configuration))
		fmt.Fprintln(s.out)
	}
	s.f.footer(-1)
	return "", nil
}

func cmdList(s *Shell, args []Value) (string, error) {
	if err := argCount(args, 0, 1); err != nil {
		return "", err
	}
	regex, ns := ".*", ""
	if len(args) == 1 {
		r, err := nameArg("the regular expression", args[0])
		if err != nil {
			return "", err
		}
		regex = r
		// 'ns:.*' lists a namespace's tables.
		if n, rest, ok := strings.Cut(r, ":"); ok && !strings.ContainsAny(n, ".*+?[]()\\|^$") {
			ns, regex = n, rest
		}
	}
	var names []string
	var err error
	if ns != "" {
		all, lerr := s.c.ListTableNamesByNamespace(s.ctx, ns)
		if lerr != nil {
			return "", lerr
		}
		re, rerr := compileJavaRegex(regex)
		if rerr != nil {
			return "", rerr
		}
		for _, n := range all {
			_, q, _ := strings.Cut(n, ":")
			if re.MatchString(q) {
				names = append(names, n)
			}
		}
	} else if names, err = s.c.ListTableNames(s.ctx, regex, false, ""); err != nil {
		return "", err
	}
	s.f.header("TABLE")
	for _, n := range names {
		s.f.row(true, n)
	}
	s.f.footer(len(names))
	return inspectStrings(names), nil
}

func inspectStrings(list []string) string {
	parts := make([]string, len(list))
	for i, n := range list {
		parts[i] = rubyQuote([]byte(n))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func cmdExists(s *Shell, args []Value) (string, error) {
	if err := argCount(args, 1, 1); err != nil {
		return "", err
	}
	table, err := tableArg(args[0])
	if err != nil {
		return "", err
	}
	ok, err := s.exists(table)
	if err != nil {
		return "", err
	}
	word := "does not exist"
	if ok {
		word = "does exist"
	}
	s.f.header()
	s.f.row(true, "Table "+table+" "+word)
	return fmt.Sprint(ok), nil
}

func cmdIsEnabled(want bool) func(s *Shell, args []Value) (string, error) {
	return func(s *Shell, args []Value) (string, error) {
		if err := argCount(args, 1, 1); err != nil {
			return "", err
		}
		table, err := tableArg(args[0])
		if err != nil {
			return "", err
		}
		st, err := s.c.TableState(s.ctx, table)
		if err != nil {
			return "", err
		}
		v := st == client.TableEnabled
		if !want {
			v = st == client.TableDisabled
		}
		s.f.header()
		s.f.row(true, fmt.Sprint(v))
		return fmt.Sprint(v), nil
	}
}

var (
	cmdEnable  = cmdSetState(client.TableEnabled, (*client.Client).EnableTable)
	cmdDisable = cmdSetState(client.TableDisabled, (*client.Client).DisableTable)
)

// cmdSetState is enable or disable: a table already in state is left alone.
func cmdSetState(state client.TableState, set func(*client.Client, context.Context, string) error) func(*Shell, []Value) (string, error) {
	return func(s *Shell, args []Value) (string, error) {
		if err := argCount(args, 1, 1); err != nil {
			return "", err
		}
		table, err := tableArg(args[0])
		if err != nil {
			return "", err
		}
		if err := s.mustExist(table); err != nil {
			return "", err
		}
		if st, err := s.c.TableState(s.ctx, table); err != nil || st == state {
			return "", err
		}
		return "", set(s.c, s.ctx, table)
	}
}

func cmdDrop(s *Shell, args []Value) (string, error) {
	if err := argCount(args, 1, 1); err != nil {
		return "", err
	}
	table, err := tableArg(args[0])
	if err != nil {
		return "", err
	}
	if err := s.mustExist(table); err != nil {
		return "", err
	}
	if en, err := s.enabled(table); err != nil {
		return "", err
	} else if en {
		return "", errors.Newf("Table %s is enabled. Disable it first.", table)
	}
	return "", s.c.DeleteTable(s.ctx, table)
}

func cmdTruncate(preserve bool) func(s *Shell, args []Value) (string, error) {
	return func(s *Shell, args []Value) (string, error) {
		if err := argCount(args, 1, 1); err != nil {
			return "", err
		}
		table, err := tableArg(args[0])
		if err != nil {
			return "", err
		}
		if err := s.mustExist(table); err != nil {
			return "", err
		}
		fmt.Fprintf(s.out, "Truncating '%s' table (it may take a while):\n", table)
		en, err := s.enabled(table)
		if err != nil {
			return "", err
		}
		if en {
			fmt.Fprintln(s.out, "Disabling table...")
			if err := s.c.DisableTable(s.ctx, table); err != nil {
				return "", err
			}
		}
		fmt.Fprintln(s.out, "Truncating table...")
		return "", s.c.TruncateTable(s.ctx, table, preserve)
	}
}

func cmdCreateNamespace(s *Shell, args []Value) (string, error) {
	if err := argCount(args, 1, 2); err != nil {
		return "", err
	}
	name, err := nameArg("Namespace name", args[0])
	if err != nil {
		return "", err
	}
	nd := client.NamespaceDescriptor{Name: name, Configuration: map[string]string{}}
	if len(args) == 2 {
		if err := stringMap("namespace properties", args[1], nd.Configuration); err != nil {
			return "", err
		}
	}
	return "", s.c.CreateNamespace(s.ctx, nd)
}

func cmdDropNamespace(s *Shell, args []Value) (string, error) {
	if err := argCount(args, 1, 1); err != nil {
		return "", err
	}
	name, err := nameArg("Namespace name", args[0])
	if err != nil {
		return "", err
	}
	return "", s.c.DeleteNamespace(s.ctx, name)
}

func cmdListNamespace(s *Shell, args []Value) (string, error) {
	if err := argCount(args, 0, 1); err != nil {
		return "", err
	}
	regex := ".*"
	if len(args) == 1 {
		r, err := nameArg("the regular expression", args[0])
		if err != nil {
			return "", err
		}
		regex = r
	}
	re, err := compileJavaRegex(regex)
	if err != nil {
		return "", err
	}
	all, err := s.c.ListNamespaces(s.ctx)
	if err != nil {
		return "", err
	}
	sort.Strings(all)
	s.f.header("NAMESPACE")
	n := 0
	for _, ns := range all {
		if re.MatchString(ns) {
			s.f.row(true, ns)
			n++
		}
	}
	s.f.footer(n)
	return "", nil
}

func cmdDescribeNamespace(s *Shell, args []Value) (string, error) {
	if err := argCount(args, 1, 1); err != nil {
		return "", err
	}
	name, err := nameArg("Namespace name", args[0])
	if err != nil {
		return "", err
	}
	nd, err := s.c.GetNamespace(s.ctx, name)
	if err != nil {
		return "", err
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "{NAME => '%s'", nd.Name)
	for _, k := range sortedKeys(nd.Configuration) {
		fmt.Fprintf(&sb, ", %s => '%s'", k, nd.Configuration[k])
	}
	sb.WriteString("}")
	s.f.header("DESCRIPTION")
	s.f.row(true, sb.String())
	s.f.footer(-1)
	return "", nil
}
