package shell

import (
	"bytes"
	"fmt"
	"io"
	"math"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/client"
	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/filter"
)

// cellString is HBase's table.rb to_string of a cell: "timestamp=...,
// value=..." (a delete marker shows its type instead of a value), cut to
// maxLength characters if that is not negative.
func (s *Shell) cellString(c *client.Cell, maxLength int) string {
	ts := formatTimestamp(c.Timestamp, s.epoch, s.loc)
	var v string
	if c.Type != encoding.TypePut {
		v = fmt.Sprintf("timestamp=%s, type=%s", ts, c.Type)
	} else {
		v = fmt.Sprintf("timestamp=%s, value=%s", ts, binary(c.Value))
	}
	if maxLength >= 0 && len(v) > maxLength {
		v = v[:maxLength]
	}
	return v
}

func columnName(c *client.Cell) string { return binary(c.Family) + ":" + binary(c.Qualifier) }

// timeRange reads TIMERANGE => [min, max) and TIMESTAMP => ts.
func timeRange(o *options) (client.TimeRange, bool, error) {
	if v, ok := o.get("TIMERANGE"); ok {
		a, isArr := v.(*Array)
		if !isArr || len(a.Elems) != 2 {
			return client.TimeRange{}, false, usagef("TIMERANGE must be [min, max], got %s", inspect(v))
		}
		lo, err := intArg("TIMERANGE's min", a.Elems[0])
		if err != nil {
			return client.TimeRange{}, false, err
		}
		hi, err := intArg("TIMERANGE's max", a.Elems[1])
		if err != nil {
			return client.TimeRange{}, false, err
		}
		if lo < 0 || hi < lo {
			return client.TimeRange{}, false, usagef("TIMERANGE [%d, %d]: want 0 <= min <= max", lo, hi)
		}
		return client.TimeRange{Min: lo, Max: hi}, true, nil
	}
	if v, ok := o.get("TIMESTAMP"); ok {
		ts, err := intArg("TIMESTAMP", v)
		if err != nil {
			return client.TimeRange{}, false, err
		}
		if ts < 0 || ts == math.MaxInt64 {
			return client.TimeRange{}, false, usagef("TIMESTAMP %d is out of range", ts)
		}
		return client.TimeRange{Min: ts, Max: ts + 1}, true, nil
	}
	return client.TimeRange{}, false, nil
}

func columnsOf(what string, v Value) ([]client.Column, error) {
	list, err := stringList(what, v)
	if err != nil {
		return nil, err
	}
	var cols []client.Column
	for _, c := range list {
		fam, qual, hasQual := parseColumn(c)
		if len(fam) == 0 {
			return nil, usagef("column %q has no family", c)
		}
		if hasQual {
			cols = append(cols, client.Column{Family: fam, Qualifier: qual})
		} else {
			cols = append(cols, client.Column{Family: fam})
		}
	}
	return cols, nil
}

func cmdPut(s *Shell, args []Value) (string, error) {
	if err := argCount(args, 4, 6); err != nil {
		return "", err
	}
	table, err := tableArg(args[0])
	if err != nil {
		return "", err
	}
	row, err := bytesArg("row", args[1])
	if err != nil {
		return "", err
	}
	col, err := bytesArg("column", args[2])
	if err != nil {
		return "", err
	}
	val, err := bytesArg("value", args[3])
	if err != nil {
		return "", err
	}
	ts, opts, err := intAndOptions(args[4:], "timestamp", int64(client.LatestTimestamp))
	if err != nil {
		return "", err
	}
	if ts < 0 {
		return "", usagef("timestamp %d is negative", ts)
	}
	fam, qual, _ := parseColumn(col)
	m := client.NewPut(table, row).AddAt(fam, qual, ts, val)
	if err := mutationOptions(m, opts, "put"); err != nil {
		return "", err
	}
	_, err = s.c.Mutate(s.ctx, m)
	return "", err
}

// mutationOptions applies put's and incr's {TTL => ms} (ATTRIBUTES and
// VISIBILITY need features the client does not carry, and are refused).
func mutationOptions(m *client.Mutation, o *options, cmd string) error {
	if o == nil {
		return nil
	}
	if v, ok := o.get("TTL"); ok {
		ms, err := intArg("TTL", v)
		if err != nil {
			return err
		}
		if ms <= 0 {
			return usagef("TTL must be a positive number of milliseconds")
		}
		m.TTL = msDuration(ms)
	}
	return o.refuseUnknown(cmd)
}

func cmdGet(s *Shell, args []Value) (string, error) {
	if err := argCount(args, 2, -1); err != nil {
		return "", err
	}
	table, err := tableArg(args[0])
	if err != nil {
		return "", err
	}
	row, err := bytesArg("row", args[1])
	if err != nil {
		return "", err
	}
	g := &client.Get{Table: table, Row: row}
	maxLength := -1
	rest := args[2:]
	if len(rest) == 1 {
		if h, ok := rest[0].(*Hash); ok {
			o, err := optionsOf(h)
			if err != nil {
				return "", err
			}
			if v, ok := o.get("COLUMN"); ok {
				if g.Columns, err = columnsOf("COLUMN", v); err != nil {
					return "", err
				}
			}
			if v, ok := o.get("COLUMNS"); ok {
				if g.Columns, err = columnsOf("COLUMNS", v); err != nil {
					return "", err
				}
			}
			if v, ok := o.get("VERSIONS"); ok {
				n, err := intArg("VERSIONS", v)
				if err != nil {
					return "", err
				}
				if n < 1 || n > math.MaxInt32 {
					return "", usagef("VERSIONS must be at least 1")
				}
				g.MaxVersions = int(n)
			}
			if g.TimeRange, _, err = timeRange(o); err != nil {
				return "", err
			}
			if v, ok := o.get("FILTER"); ok {
				if g.Filter, err = filterArg(v); err != nil {
					return "", err
				}
			}
			if v, ok := o.get("MAXLENGTH"); ok {
				n, err := intArg("MAXLENGTH", v)
				if err != nil {
					return "", err
				}
				maxLength = int(n)
			}
			if err := o.refuseUnknown("get"); err != nil {
				return "", err
			}
			rest = nil
		}
	}
	if len(rest) > 0 {
		// get 't', 'r', 'c1', 'c2' or get 't', 'r', ['c1', 'c2']
		for _, a := range rest {
			cols, err := columnsOf("column", a)
			if err != nil {
				return "", err
			}
			g.Columns = append(g.Columns, cols...)
		}
	}
	res, err := s.c.Get(s.ctx, g)
	if err != nil {
		return "", err
	}
	s.f.header("COLUMN", "CELL")
	for _, c := range res.Cells {
		s.f.row(true, columnName(c), s.cellString(c, maxLength))
	}
	if res.Empty() {
		s.f.footer(0)
	} else {
		s.f.footer(1)
	}
	return "", nil
}

// scanOf builds a client scan from scan's options.
func scanOf(table string, o *options) (*client.Scan, int, error) {
	sc := &client.Scan{Table: table}
	maxLength := -1
	if o == nil {
		return sc, maxLength, nil
	}
	var err error
	if v, ok := o.get("STARTROW"); ok {
		if sc.StartRow, err = bytesArg("STARTROW", v); err != nil {
			return nil, 0, err
		}
	}
	if v, ok := o.get("STOPROW"); ok {
		if sc.StopRow, err = bytesArg("STOPROW", v); err != nil {
			return nil, 0, err
		}
	}
	if v, ok := o.get("ROWPREFIXFILTER"); ok {
		// As Scan.setRowPrefixFilter: it replaces STARTROW and STOPROW.
		p, err := bytesArg("ROWPREFIXFILTER", v)
		if err != nil {
			return nil, 0, err
		}
		sc.StartRow, sc.StopRow = p, prefixEnd(p)
	}
	if v, ok := o.get("COLUMNS"); ok {
		if sc.Columns, err = columnsOf("COLUMNS", v); err != nil {
			return nil, 0, err
		}
	} else if v, ok := o.get("COLUMN"); ok {
		if sc.Columns, err = columnsOf("COLUMN", v); err != nil {
			return nil, 0, err
		}
	}
	if v, ok := o.get("LIMIT"); ok {
		n, err := intArg("LIMIT", v)
		if err != nil {
			return nil, 0, err
		}
		if n > 0 {
			sc.Limit = int(min(n, math.MaxInt32))
			sc.Caching = min(sc.Limit, client.DefaultCaching)
		}
	}
	if v, ok := o.get("CACHE"); ok {
		n, err := intArg("CACHE", v)
		if err != nil {
			return nil, 0, err
		}
		if n > 0 {
			sc.Caching = int(min(n, math.MaxInt32))
		}
	}
	if v, ok := o.get("CACHE_BLOCKS"); ok {
		b, err := boolArg("CACHE_BLOCKS", v)
		if err != nil {
			return nil, 0, err
		}
		sc.NoCacheBlocks = !b
	}
	if v, ok := o.get("REVERSED"); ok {
		if sc.Reversed, err = boolArg("REVERSED", v); err != nil {
			return nil, 0, err
		}
	}
	if v, ok := o.get("VERSIONS"); ok {
		n, err := intArg("VERSIONS", v)
		if err != nil {
			return nil, 0, err
		}
		if n < 1 || n > math.MaxInt32 {
			return nil, 0, usagef("VERSIONS must be at least 1")
		}
		sc.MaxVersions = int(n)
	}
	if sc.TimeRange, _, err = timeRange(o); err != nil {
		return nil, 0, err
	}
	if v, ok := o.get("FILTER"); ok {
		if sc.Filter, err = filterArg(v); err != nil {
			return nil, 0, err
		}
	}
	if v, ok := o.get("RAW"); ok {
		raw, err := boolArg("RAW", v)
		if err != nil {
			return nil, 0, err
		}
		if raw {
			return nil, 0, errors.New("RAW scans (delete markers included) are not supported by RegionKV's client")
		}
	}
	if v, ok := o.get("MAXLENGTH"); ok {
		n, err := intArg("MAXLENGTH", v)
		if err != nil {
			return nil, 0, err
		}
		maxLength = int(n)
	}
	if v, ok := o.get("ALL_METRICS"); ok {
		if sc.TrackMetrics, err = boolArg("ALL_METRICS", v); err != nil {
			return nil, 0, err
		}
	}
	if _, ok := o.get("METRICS"); ok {
		sc.TrackMetrics = true
	}
	return sc, maxLength, nil
}

// prefixEnd is the first row after every row with prefix p (nil: none).
func prefixEnd(p []byte) []byte {
	end := bytes.Clone(p)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] != 0xFF {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

func cmdScan(s *Shell, args []Value) (string, error) {
	if err := argCount(args, 1, 2); err != nil {
		return "", err
	}
	table, err := tableArg(args[0])
	if err != nil {
		return "", err
	}
	var o *options
	if len(args) == 2 {
		if o, err = optionsOf(args[1]); err != nil {
			return "", err
		}
	}
	sc, maxLength, err := scanOf(table, o)
	if err != nil {
		return "", err
	}
	var metricFilter [][]byte
	if v, ok := o.get("METRICS"); ok {
		if metricFilter, err = stringList("METRICS", v); err != nil {
			return "", err
		}
	}
	if err := o.refuseUnknown("scan"); err != nil {
		return "", err
	}
	scanner := s.c.Scan(sc)
	defer scanner.Close()
	s.f.header("ROW", "COLUMN+CELL")
	rows := 0
	for {
		res, err := scanner.Next(s.ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", err
		}
		key := binary(res.Row())
		for _, c := range res.Cells {
			s.f.row(true, key, "column="+columnName(c)+", "+s.cellString(c, maxLength))
		}
		rows++
	}
	s.f.footer(rows)
	if sc.TrackMetrics {
		fmt.Fprintln(s.out)
		s.f.row(false, "METRIC", "VALUE")
		m := scanner.Metrics()
		for _, k := range sortedKeysInt(m) {
			if len(metricFilter) > 0 && !containsBytes(metricFilter, k) {
				continue
			}
			s.f.row(true, k, fmt.Sprint(m[k]))
		}
	}
	return "", nil
}

func containsBytes(list [][]byte, s string) bool {
	for _, b := range list {
		if string(b) == s {
			return true
		}
	}
	return false
}

// deleteArgs reads delete's and deleteall's row, column and timestamp.
func deleteMutation(args []Value, needColumn bool) (*client.Mutation, error) {
	table, err := tableArg(args[0])
	if err != nil {
		return nil, err
	}
	row, err := bytesArg("row", args[1])
	if err != nil {
		return nil, err
	}
	ts := int64(client.LatestTimestamp)
	var col []byte
	rest := args[2:]
	// A trailing hash holds VISIBILITY, which the client does not carry.
	if len(rest) > 0 {
		if h, ok := rest[len(rest)-1].(*Hash); ok {
			return nil, usagef("%s: options are not supported", inspect(h))
		}
	}
	if len(rest) > 0 {
		if _, isNil := rest[0].(*Nil); !isNil {
			if col, err = bytesArg("column", rest[0]); err != nil {
				return nil, err
			}
		}
	}
	if len(rest) > 1 {
		if ts, err = intArg("timestamp", rest[1]); err != nil {
			return nil, err
		}
		if ts < 0 {
			return nil, usagef("timestamp %d is negative", ts)
		}
	}
	m := client.NewDelete(table, row)
	if col == nil {
		if needColumn {
			return nil, usagef("delete needs a column; deleteall deletes a row")
		}
		if ts != client.LatestTimestamp {
			m.Timestamp = ts
		}
		return m, nil
	}
	fam, qual, hasQual := parseColumn(col)
	if hasQual {
		m.DeleteColumns(fam, qual, ts)
	} else {
		m.DeleteFamily(fam, ts)
	}
	return m, nil
}

func cmdDelete(s *Shell, args []Value) (string, error) {
	if err := argCount(args, 3, 5); err != nil {
		return "", err
	}
	m, err := deleteMutation(args, true)
	if err != nil {
		return "", err
	}
	_, err = s.c.Mutate(s.ctx, m)
	return "", err
}

func cmdDeleteAll(s *Shell, args []Value) (string, error) {
	if err := argCount(args, 2, 5); err != nil {
		return "", err
	}
	m, err := deleteMutation(args, false)
	if err != nil {
		return "", err
	}
	_, err = s.c.Mutate(s.ctx, m)
	return "", err
}

// counterArgs reads a counter command's table, row and family:qualifier
// column (incr, get_counter).
func counterArgs(args []Value) (table string, row, col []byte, err error) {
	if table, err = tableArg(args[0]); err != nil {
		return "", nil, nil, err
	}
	if row, err = bytesArg("row", args[1]); err != nil {
		return "", nil, nil, err
	}
	col, err = bytesArg("column", args[2])
	return table, row, col, err
}

func cmdIncr(s *Shell, args []Value) (string, error) {
	if err := argCount(args, 3, 5); err != nil {
		return "", err
	}
	table, row, col, err := counterArgs(args)
	if err != nil {
		return "", err
	}
	fam, qual, hasQual := parseColumn(col)
	if !hasQual {
		return "", usagef("Failed to provide both column family and column qualifier for incr")
	}
	amount, o, err := intAndOptions(args[3:], "value", 1)
	if err != nil {
		return "", err
	}
	m := client.NewIncrement(table, row).AddInt(fam, qual, amount)
	if err := mutationOptions(m, o, "incr"); err != nil {
		return "", err
	}
	res, err := s.c.Mutate(s.ctx, m)
	if err != nil {
		return "", err
	}
	if res.Empty() {
		fmt.Fprintln(s.out, "No counter found at specified coordinates")
		return "", nil
	}
	n, err := client.Int64(res.Cells[0].Value)
	if err != nil {
		return "", err
	}
	fmt.Fprintf(s.out, "COUNTER VALUE = %d\n", n)
	return "", nil
}

func cmdGetCounter(s *Shell, args []Value) (string, error) {
	if err := argCount(args, 3, 3); err != nil {
		return "", err
	}
	table, row, col, err := counterArgs(args)
	if err != nil {
		return "", err
	}
	fam, qual, _ := parseColumn(col)
	res, err := s.c.Get(s.ctx, &client.Get{Table: table, Row: row, Columns: []client.Column{{Family: fam, Qualifier: qual}}})
	if err != nil {
		return "", err
	}
	if res.Empty() {
		fmt.Fprintln(s.out, "No counter found at specified coordinates")
		return "", nil
	}
	v := res.Cells[0].Value
	if len(v) != 8 {
		return "", errors.Newf("the value of %s in row %s is %d bytes, not an 8-byte counter", binary(col), binary(row), len(v))
	}
	n, err := client.Int64(v)
	if err != nil {
		return "", err
	}
	fmt.Fprintf(s.out, "COUNTER VALUE = %d\n", n)
	return "", nil
}

func cmdCount(s *Shell, args []Value) (string, error) {
	if err := argCount(args, 1, 2); err != nil {
		return "", err
	}
	table, err := tableArg(args[0])
	if err != nil {
		return "", err
	}
	interval, caching := int64(1000), int64(10)
	sc := &client.Scan{Table: table, NoCacheBlocks: true}
	var f filter.Filter = filter.NewFirstKeyOnlyFilter()
	if len(args) == 2 {
		if n, ok := args[1].(*Int); ok { // the old form: count 't', INTERVAL
			interval = n.V
		} else {
			o, err := optionsOf(args[1])
			if err != nil {
				return "", err
			}
			if v, ok := o.get("INTERVAL"); ok {
				if interval, err = intArg("INTERVAL", v); err != nil {
					return "", err
				}
			}
			if v, ok := o.get("CACHE"); ok {
				if caching, err = intArg("CACHE", v); err != nil {
					return "", err
				}
			}
			if v, ok := o.get("FILTER"); ok {
				user, err := filterArg(v)
				if err != nil {
					return "", err
				}
				f = filter.NewFilterList(filter.MustPassAll, user, f)
			}
			if err := o.refuseUnknown("count"); err != nil {
				return "", err
			}
		}
	}
	if interval <= 0 || caching <= 0 || caching > math.MaxInt32 {
		return "", usagef("INTERVAL and CACHE must be positive")
	}
	sc.Caching, sc.Filter = int(caching), f
	scanner := s.c.Scan(sc)
	defer scanner.Close()
	s.f.header()
	n := int64(0)
	for {
		res, err := scanner.Next(s.ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", err
		}
		n++
		if n%interval == 0 {
			s.f.row(true, fmt.Sprintf("Current count: %d, row: %s", n, binary(res.Row())))
		}
	}
	s.f.footer(int(n))
	return fmt.Sprint(n), nil
}

// intAndOptions reads the trailing arguments of put and incr: an optional
// integer named name (def if absent) and an optional options hash, in any
// order, as HBase's shell takes them.
func intAndOptions(args []Value, name string, def int64) (int64, *options, error) {
	n, err := def, error(nil)
	var o *options
	for _, a := range args {
		if h, ok := a.(*Hash); ok {
			if o, err = optionsOf(h); err != nil {
				return 0, nil, err
			}
			continue
		}
		if n, err = intArg(name, a); err != nil {
			return 0, nil, err
		}
	}
	return n, o, nil
}
