package scanner

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/filter"
	"github.com/regionkv/regionkv/hfile"
	"github.com/regionkv/regionkv/memstore"
	"github.com/stretchr/testify/require"
)

var testCmp = encoding.InnerStoreComparer

func randomStoreCells(rng *rand.Rand, n int) []*encoding.KeyValue {
	types := []encoding.Type{encoding.TypePut, encoding.TypePut, encoding.TypePut, encoding.TypePut,
		encoding.TypeDelete, encoding.TypeDeleteColumn, encoding.TypeDeleteFamily, encoding.TypeDeleteFamilyVersion}
	var kvs []*encoding.KeyValue
	for i := 0; i < n; i++ {
		t := types[rng.IntN(len(types))]
		kv := &encoding.KeyValue{
			Row: []byte(fmt.Sprintf("r%02d", rng.IntN(30))), Family: []byte("f"),
			Qualifier: []byte{byte('a' + rng.IntN(5))}, Timestamp: int64(1 + rng.IntN(8)), Type: t,
			SeqNum: encoding.SeqNum(i + 1), Value: []byte(fmt.Sprint("v", i)),
		}
		if t == encoding.TypeDeleteFamily || t == encoding.TypeDeleteFamilyVersion {
			kv.Qualifier = nil
		}
		kvs = append(kvs, kv)
	}
	return kvs
}

// model computes what a read returns, straight from HBase's rules: a put is
// hidden by a DeleteFamily or DeleteColumn at or after its timestamp, or a
// DeleteFamilyVersion or Delete at exactly its timestamp, whatever the order
// of writes; of cells with the same timestamp the newest write wins; then
// the newest MaxVersions versions within the time range and TTL.
func model(kvs []*encoding.KeyValue, readPoint encoding.SeqNum, o QueryOptions) map[string][]string {
	tr := o.TimeRange
	if tr == (TimeRange{}) {
		tr = AllTime
	}
	maxV := max(o.MaxVersions, 1)
	type colKey struct{ row, qual string }
	puts := map[colKey][]*encoding.KeyValue{}
	var dels []*encoding.KeyValue
	for _, kv := range kvs {
		if kv.SeqNum > readPoint {
			continue
		}
		if o.TTLMillis > 0 && kv.Timestamp < o.NowMillis-o.TTLMillis {
			continue
		}
		if kv.Type.IsDelete() {
			dels = append(dels, kv)
		} else {
			k := colKey{string(kv.Row), string(kv.Qualifier)}
			puts[k] = append(puts[k], kv)
		}
	}
	masked := func(p *encoding.KeyValue) bool {
		for _, d := range dels {
			if !bytes.Equal(d.Row, p.Row) {
				continue
			}
			switch d.Type {
			case encoding.TypeDeleteFamily:
				if d.Timestamp >= p.Timestamp {
					return true
				}
			case encoding.TypeDeleteFamilyVersion:
				if d.Timestamp == p.Timestamp {
					return true
				}
			case encoding.TypeDeleteColumn:
				if bytes.Equal(d.Qualifier, p.Qualifier) && d.Timestamp >= p.Timestamp {
					return true
				}
			case encoding.TypeDelete:
				if bytes.Equal(d.Qualifier, p.Qualifier) && d.Timestamp == p.Timestamp {
					return true
				}
			}
		}
		return false
	}
	out := map[string][]string{}
	for k, ps := range puts {
		if len(o.Columns) > 0 {
			found := false
			for _, c := range o.Columns {
				found = found || string(c) == k.qual
			}
			if !found {
				continue
			}
		}
		sort.Slice(ps, func(i, j int) bool {
			if ps[i].Timestamp != ps[j].Timestamp {
				return ps[i].Timestamp > ps[j].Timestamp
			}
			return ps[i].SeqNum > ps[j].SeqNum
		})
		n := 0
		var lastTS int64 = -1
		for _, p := range ps {
			if masked(p) || p.Timestamp == lastTS {
				continue
			}
			if !tr.Within(p.Timestamp) {
				continue
			}
			lastTS = p.Timestamp
			if n == maxV {
				break
			}
			n++
			out[k.row] = append(out[k.row], fmt.Sprintf("%s/%d=%s", k.qual, p.Timestamp, p.Value))
		}
	}
	for _, v := range out {
		sort.Strings(v)
	}
	return out
}

// sources splits cells over two store files and two memstore segments and
// returns scanners over them at readPoint.
func sources(t *testing.T, kvs []*encoding.KeyValue, rng *rand.Rand, readPoint encoding.SeqNum) []KeyValueScanner {
	parts := make([][]*encoding.KeyValue, 4)
	for _, kv := range kvs {
		i := rng.IntN(4)
		parts[i] = append(parts[i], kv)
	}
	var out []KeyValueScanner
	for i := 0; i < 2; i++ {
		sort.Slice(parts[i], func(a, b int) bool { return testCmp.CompareKeyValues(parts[i][a], parts[i][b]) < 0 })
		var buf bytes.Buffer
		w, err := hfile.NewWriter(&buf, hfile.WriterOptions{BlockSize: 256, Encoding: encoding.EncodingFastDiff})
		require.NoError(t, err)
		for _, kv := range parts[i] {
			require.NoError(t, w.Append(kv))
		}
		require.NoError(t, w.Close())
		r, err := hfile.Open(bytes.NewReader(buf.Bytes()), int64(buf.Len()), "f", hfile.ReaderOptions{})
		require.NoError(t, err)
		out = append(out, NewStoreFileScanner(r, readPoint, int64(i), false))
	}
	for i := 2; i < 4; i++ {
		seg := memstore.NewSegment(testCmp)
		for _, kv := range parts[i] {
			seg.Add(kv)
		}
		out = append(out, NewMemStoreScanner(seg.NewScanner(readPoint), int64(100+i)))
	}
	return out
}

func TestStoreScannerAgainstModel(t *testing.T) {
	for seed := uint64(0); seed < 200; seed++ {
		rng := rand.New(rand.NewPCG(seed, 99))
		kvs := randomStoreCells(rng, 400)
		readPoint := encoding.SeqNum(200 + rng.IntN(300))
		o := QueryOptions{MaxVersions: 1 + rng.IntN(3)}
		if rng.IntN(3) == 0 {
			o.TimeRange = TimeRange{Min: int64(1 + rng.IntN(4)), Max: int64(4 + rng.IntN(5))}
		}
		if rng.IntN(3) == 0 {
			o.Columns = [][]byte{{byte('a' + rng.IntN(5))}, {byte('a' + rng.IntN(5))}}
			if bytes.Equal(o.Columns[0], o.Columns[1]) {
				o.Columns = o.Columns[:1]
			}
		}
		if rng.IntN(4) == 0 {
			o.TTLMillis, o.NowMillis = 4, 8
		}
		o.Reversed = rng.IntN(2) == 0
		if rng.IntN(2) == 0 {
			o.StartRow = []byte(fmt.Sprintf("r%02d", rng.IntN(30)))
			o.StartExclusive = rng.IntN(2) == 0
		}
		if rng.IntN(2) == 0 {
			o.StopRow = []byte(fmt.Sprintf("r%02d", rng.IntN(30)))
			o.StopInclusive = rng.IntN(2) == 0
		}
		o.ReuseCells = rng.IntN(2) == 0
		want := model(kvs, readPoint, o)
		for row := range want {
			if !inRange([]byte(row), o) {
				delete(want, row)
			}
		}
		ss, err := NewStoreScanner(testCmp, sources(t, kvs, rng, readPoint), o)
		require.NoError(t, err)
		got := readRows(t, ss, o.Reversed, seed)
		ss.Close()
		require.Equal(t, want, got, "seed %d, options %+v", seed, o)
	}
}

// readRows reads ss to the end and returns each row's cells as
// qualifier/timestamp=value, sorted, checking that rows come once each and
// in the scan's order.
func readRows(t *testing.T, ss *StoreScanner, reversed bool, seed uint64) map[string][]string {
	got := map[string][]string{}
	last := ""
	for {
		cells, ok, err := ss.NextRow(nil)
		require.NoError(t, err)
		if !ok {
			return got
		}
		row := string(cells[0].Row)
		if last != "" {
			require.Equal(t, reversed, row < last, "seed %d: row %s after %s (reversed=%t)", seed, row, last, reversed)
		}
		last = row
		_, dup := got[row]
		require.False(t, dup, "row %s returned twice", row)
		for _, c := range cells {
			require.Equal(t, row, string(c.Row))
			got[row] = append(got[row], fmt.Sprintf("%s/%d=%s", c.Qualifier, c.Timestamp, c.Value))
		}
		sort.Strings(got[row])
	}
}

// inRange applies a scan's start and stop rows.
func inRange(row []byte, o QueryOptions) bool {
	if o.StartRow != nil {
		c := bytes.Compare(row, o.StartRow)
		if o.Reversed {
			c = -c
		}
		if c < 0 || (c == 0 && o.StartExclusive) {
			return false
		}
	}
	if o.StopRow != nil {
		c := bytes.Compare(row, o.StopRow)
		if o.Reversed {
			c = -c
		}
		if c > 0 || (c == 0 && !o.StopInclusive) {
			return false
		}
	}
	return true
}

func TestStoreScannerStopRow(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	var kvs []*encoding.KeyValue
	for i := 0; i < 10; i++ {
		kvs = append(kvs, &encoding.KeyValue{Row: []byte(fmt.Sprintf("r%d", i)), Family: []byte("f"), Timestamp: 1, Type: encoding.TypePut, SeqNum: encoding.SeqNum(i + 1)})
	}
	for _, incl := range []bool{false, true} {
		ss, err := NewStoreScanner(testCmp, sources(t, kvs, rng, 100),
			QueryOptions{StartRow: []byte("r3"), StopRow: []byte("r6"), StopInclusive: incl})
		require.NoError(t, err)
		var rows []string
		for {
			cells, ok, err := ss.NextRow(nil)
			require.NoError(t, err)
			if !ok {
				break
			}
			rows = append(rows, string(cells[0].Row))
		}
		ss.Close()
		want := []string{"r3", "r4", "r5"}
		if incl {
			want = append(want, "r6")
		}
		require.Equal(t, want, rows)
	}
}

// countingFilter counts the cells its filter is asked about.
type countingFilter struct {
	filter.Filter
	cells int
}

func (c *countingFilter) FilterCell(kv *encoding.KeyValue) (filter.ReturnCode, error) {
	c.cells++
	return c.Filter.FilterCell(kv)
}

// TestStoreScannerColumnHints: a filter's column hints are followed
// forward and, within the row, reversed, over files and memstores, with
// delete markers in between.
func TestStoreScannerColumnHints(t *testing.T) {
	for seed := uint64(0); seed < 100; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		kvs := randomStoreCells(rng, 400)
		o := QueryOptions{MaxVersions: 1 + rng.IntN(3), Reversed: seed%2 == 1}
		want := model(kvs, 1000, o)
		for row, cells := range want {
			var keep []string
			for _, c := range cells {
				if c[0] == 'c' || c[0] == 'd' {
					keep = append(keep, c)
				}
			}
			want[row] = keep
			if len(keep) == 0 {
				delete(want, row)
			}
		}
		f := &countingFilter{Filter: filter.NewColumnRangeFilter([]byte("c"), true, []byte("d"), true)}
		f.SetReversed(o.Reversed)
		o.Filter = f
		ss, err := NewStoreScanner(testCmp, sources(t, kvs, rng, 1000), o)
		require.NoError(t, err)
		got := map[string][]string{}
		for {
			cells, ok, err := ss.NextRow(nil)
			require.NoError(t, err)
			if !ok {
				break
			}
			for _, c := range cells {
				got[string(c.Row)] = append(got[string(c.Row)], fmt.Sprintf("%s/%d=%s", c.Qualifier, c.Timestamp, c.Value))
			}
			sort.Strings(got[string(cells[0].Row)])
			f.Reset()
		}
		ss.Close()
		require.Equal(t, want, got, "seed %d, reversed %t", seed, o.Reversed)
		// Columns a and b are sought past: the filter sees at most the
		// first of them in each row (and e is left by NEXT_ROW).
	}

	// Each row's first cell before the range seeks past a and b at once:
	// the filter sees it and c, forward and reversed.
	var kvs []*encoding.KeyValue
	for i := 0; i < 10; i++ {
		for _, q := range []string{"a", "b", "c"} {
			for ts := int64(1); ts <= 3; ts++ {
				kvs = append(kvs, &encoding.KeyValue{Row: []byte(fmt.Sprintf("r%d", i)), Family: []byte("f"), Qualifier: []byte(q),
					Timestamp: ts, Type: encoding.TypePut, SeqNum: encoding.SeqNum(len(kvs) + 1)})
			}
		}
	}
	for _, reversed := range []bool{false, true} {
		f := &countingFilter{Filter: filter.NewColumnRangeFilter([]byte("c"), true, nil, false)}
		f.SetReversed(reversed)
		ss, err := NewStoreScanner(testCmp, sources(t, kvs, rand.New(rand.NewPCG(2, 2)), 1000),
			QueryOptions{Filter: f, Reversed: reversed, MaxVersions: 1, FamilyMaxVersions: 1})
		require.NoError(t, err)
		rows := 0
		for {
			cells, ok, err := ss.NextRow(nil)
			require.NoError(t, err)
			if !ok {
				break
			}
			require.Len(t, cells, 1)
			require.Equal(t, "c", string(cells[0].Qualifier))
			rows++
		}
		ss.Close()
		require.Equal(t, 10, rows)
		require.Equal(t, 20, f.cells, "reversed %t", reversed)
	}
}

// TestStoreScannerDoneAtNextRow: a filter that became done during a row
// ends the store scanner at the next row's first cell, before the region
// resets it, as HBase's matcher does.
func TestStoreScannerDoneAtNextRow(t *testing.T) {
	kv := func(row, q string) *encoding.KeyValue {
		return &encoding.KeyValue{Row: []byte(row), Family: []byte("f"), Qualifier: []byte(q), Timestamp: 1, Type: encoding.TypePut, SeqNum: 1}
	}
	kvs := []*encoding.KeyValue{kv("r1", "a"), kv("r1", "b"), kv("r2", "a"), kv("r3", "a")}
	for _, reversed := range []bool{false, true} {
		f, err := filter.NewColumnCountGetFilter(1)
		require.NoError(t, err)
		f.SetReversed(reversed)
		ss, err := NewStoreScanner(testCmp, sources(t, kvs, rand.New(rand.NewPCG(1, 1)), 10), QueryOptions{Filter: f, Reversed: reversed})
		require.NoError(t, err)
		var rows []string
		for {
			cells, ok, err := ss.NextRow(nil)
			require.NoError(t, err)
			if !ok {
				break
			}
			rows = append(rows, fmt.Sprintf("%s:%d", cells[0].Row, len(cells)))
			f.Reset()
		}
		ss.Close()
		want := []string{"r1:1"}
		if reversed {
			want = []string{"r3:1", "r2:1", "r1:1"} // no row has two columns before r1
		}
		require.Equal(t, want, rows, "reversed %t", reversed)
	}
}

// TestTopColumnGoesOn: a store scanner leaving a column whose versions go on
// in the memstore (a counter written many times since the last flush) seeks
// past it rather than stepping down the list; see trySkip. The heap says so
// only for a memstore scanner at the last cell it collected of such a
// column, and never for a reversed heap.
func TestTopColumnGoesOn(t *testing.T) {
	seg := memstore.NewSegment(testCmp)
	seq := encoding.SeqNum(0)
	for _, c := range []struct {
		row      string
		versions int
	}{{"a", 20}, {"b", 1}} {
		for ts := 1; ts <= c.versions; ts++ {
			seq++
			seg.Add(&encoding.KeyValue{Row: []byte(c.row), Family: []byte("f"), Qualifier: []byte("q"),
				Timestamp: int64(ts), Type: encoding.TypePut, SeqNum: seq, Value: []byte{byte(ts)}})
		}
	}
	for _, reversed := range []bool{false, true} {
		m := NewMemStoreScanner(seg.NewScanner(seq), 100)
		kh := NewKeyValueHeap(testCmp, []KeyValueScanner{m}, reversed)
		require.NoError(t, kh.Seek(encoding.FirstOnRow(nil, []byte("a"))))
		require.Equal(t, "a", string(kh.Peek().Row))
		require.Equal(t, !reversed, kh.topColumnGoesOn(), "reversed=%t: a has 19 more versions", reversed)
		require.NoError(t, kh.Seek(encoding.FirstOnRow(nil, []byte("b"))))
		require.Equal(t, "b", string(kh.Peek().Row))
		require.False(t, kh.topColumnGoesOn(), "b has one version")
		kh.Close()
	}

	// Row a's newest version, and then row b, through a store scanner that
	// keeps one version: it seeks past a's other nineteen.
	m := NewMemStoreScanner(seg.NewScanner(seq), 100)
	ss, err := NewStoreScanner(testCmp, []KeyValueScanner{m}, QueryOptions{MaxVersions: 1})
	require.NoError(t, err)
	defer ss.Close()
	for _, want := range []struct {
		row string
		v   byte
	}{{"a", 20}, {"b", 1}} {
		cells, ok, err := ss.NextRow(nil)
		require.NoError(t, err)
		require.True(t, ok)
		require.Len(t, cells, 1)
		require.Equal(t, want.row, string(cells[0].Row))
		require.Equal(t, []byte{want.v}, cells[0].Value)
	}
	_, ok, err := ss.NextRow(nil)
	require.NoError(t, err)
	require.False(t, ok)
}
