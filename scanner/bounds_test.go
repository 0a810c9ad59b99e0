package scanner

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/hfile"
	"github.com/regionkv/regionkv/memstore"
	"github.com/stretchr/testify/require"
)

// TestStoreScannerRowBounds reads store files through row bounds, as a
// daughter region reads its parent's files by reference, merged with
// memstore segments holding the daughter's own newer writes: forward and
// reversed, with versions, deletes, time ranges, columns and start and stop
// rows, the result must be what the model makes of the cells in the bounds
// alone.
func TestStoreScannerRowBounds(t *testing.T) {
	for seed := uint64(0); seed < 300; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		kvs := randomStoreCells(rng, 400)
		var lo, hi []byte
		switch rng.IntN(3) {
		case 0: // a bottom half
			hi = []byte(fmt.Sprintf("r%02d", 1+rng.IntN(29)))
		case 1: // a top half
			lo = []byte(fmt.Sprintf("r%02d", rng.IntN(30)))
		default: // both (a half of a half); bounds between rows too
			a, b := rng.IntN(30), rng.IntN(30)
			if a > b {
				a, b = b, a
			}
			lo, hi = []byte(fmt.Sprintf("r%02d", a)), []byte(fmt.Sprintf("r%02d!", b))
		}
		in := func(row []byte) bool {
			return (lo == nil || bytes.Compare(row, lo) >= 0) && (hi == nil || bytes.Compare(row, hi) < 0)
		}
		readPoint := encoding.SeqNum(200 + rng.IntN(300))
		o := QueryOptions{MaxVersions: 1 + rng.IntN(3), ReuseCells: rng.IntN(2) == 0}
		if rng.IntN(3) == 0 {
			o.TimeRange = TimeRange{Min: int64(1 + rng.IntN(4)), Max: int64(4 + rng.IntN(5))}
		}
		if rng.IntN(3) == 0 {
			o.Columns = [][]byte{{byte('a' + rng.IntN(5))}}
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
		var inBounds []*encoding.KeyValue
		for _, kv := range kvs {
			if in(kv.Row) {
				inBounds = append(inBounds, kv)
			}
		}
		want := model(inBounds, readPoint, o)
		for row := range want {
			if !inRange([]byte(row), o) {
				delete(want, row)
			}
		}
		// The files hold every row; the memstores, newer writes, only the
		// bounded ones.
		parts := make([][]*encoding.KeyValue, 4)
		for _, kv := range kvs {
			i := rng.IntN(4)
			if i >= 2 && !in(kv.Row) {
				i = rng.IntN(2)
			}
			parts[i] = append(parts[i], kv)
		}
		var srcs []KeyValueScanner
		for i := 0; i < 2; i++ {
			sort.Slice(parts[i], func(a, b int) bool { return testCmp.CompareKeyValues(parts[i][a], parts[i][b]) < 0 })
			var buf bytes.Buffer
			w, err := hfile.NewWriter(&buf, hfile.WriterOptions{BlockSize: 128 << rng.IntN(3), Encoding: encoding.EncodingFastDiff})
			require.NoError(t, err)
			for _, kv := range parts[i] {
				require.NoError(t, w.Append(kv))
			}
			require.NoError(t, w.Close())
			r, err := hfile.Open(bytes.NewReader(buf.Bytes()), int64(buf.Len()), "f", hfile.ReaderOptions{})
			require.NoError(t, err)
			fs := NewStoreFileScanner(r, readPoint, int64(i), false)
			fs.SetRowBounds(lo, hi)
			srcs = append(srcs, fs)
		}
		for i := 2; i < 4; i++ {
			seg := memstore.NewSegment(testCmp)
			for _, kv := range parts[i] {
				seg.Add(kv)
			}
			srcs = append(srcs, NewMemStoreScanner(seg.NewScanner(readPoint), int64(100+i)))
		}
		ss, err := NewStoreScanner(testCmp, srcs, o)
		require.NoError(t, err)
		got := map[string][]string{}
		var last string
		for {
			cells, ok, err := ss.NextRow(nil)
			require.NoError(t, err)
			if !ok {
				break
			}
			row := string(cells[0].Row)
			require.True(t, in(cells[0].Row), "seed %d: row %s outside [%q, %q)", seed, row, lo, hi)
			if last != "" {
				require.Equal(t, o.Reversed, row < last, "seed %d: row %s after %s", seed, row, last)
			}
			last = row
			_, dup := got[row]
			require.False(t, dup, "seed %d: row %s returned twice", seed, row)
			for _, c := range cells {
				got[row] = append(got[row], fmt.Sprintf("%s/%d=%s", c.Qualifier, c.Timestamp, c.Value))
			}
			sort.Strings(got[row])
		}
		ss.Close()
		require.Equal(t, want, got, "seed %d: bounds [%q, %q), options %+v", seed, lo, hi, o)
	}
}

// TestStoreFileScannerAtUpperBound: a forward scan of a bottom half stops
// at the bound and says so; one of a top half runs to the file's end.
func TestStoreFileScannerAtUpperBound(t *testing.T) {
	var buf bytes.Buffer
	w, err := hfile.NewWriter(&buf, hfile.WriterOptions{BlockSize: 64})
	require.NoError(t, err)
	for i := 0; i < 20; i++ {
		require.NoError(t, w.Append(&encoding.KeyValue{Row: []byte(fmt.Sprintf("r%02d", i)), Family: []byte("f"),
			Qualifier: []byte("q"), Timestamp: 1, Type: encoding.TypePut, Value: []byte("v")}))
	}
	require.NoError(t, w.Close())
	r, err := hfile.Open(bytes.NewReader(buf.Bytes()), int64(buf.Len()), "f", hfile.ReaderOptions{})
	require.NoError(t, err)
	count := func(lo, hi []byte) (int, bool) {
		s := NewStoreFileScanner(r, 100, 0, false)
		defer s.Close()
		s.SetRowBounds(lo, hi)
		require.NoError(t, s.Seek(encoding.FirstOnRow(nil, nil)))
		n := 0
		for ; s.Peek() != nil; n++ {
			require.NoError(t, s.Next())
		}
		return n, s.AtUpperBound()
	}
	n, at := count(nil, []byte("r07"))
	require.Equal(t, 7, n)
	require.True(t, at)
	n, at = count([]byte("r07"), nil)
	require.Equal(t, 13, n)
	require.False(t, at)
	n, at = count([]byte("r03"), []byte("r05x"))
	require.Equal(t, 3, n)
	require.True(t, at)
}
