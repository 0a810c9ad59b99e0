package scanner

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/hfile"
	"github.com/regionkv/regionkv/memstore"
	"github.com/stretchr/testify/require"
)

// ttlTag is a cell TTL tag of ms milliseconds.
func ttlTag(ms int64) []byte {
	var v [8]byte
	binary.BigEndian.PutUint64(v[:], uint64(ms))
	return encoding.AppendTag(nil, encoding.TagTypeTTL, v[:])
}

// oneFile writes kvs, sorted, into one store file with tags and returns a
// scanner of it at readPoint.
func oneFile(t *testing.T, kvs []*encoding.KeyValue, readPoint encoding.SeqNum, blockSize int) *StoreFileScanner {
	sorted := append([]*encoding.KeyValue(nil), kvs...)
	sort.Slice(sorted, func(a, b int) bool { return testCmp.CompareKeyValues(sorted[a], sorted[b]) < 0 })
	var buf bytes.Buffer
	w, err := hfile.NewWriter(&buf, hfile.WriterOptions{BlockSize: blockSize, Encoding: encoding.EncodingFastDiff, IncludesTags: true})
	require.NoError(t, err)
	for _, kv := range sorted {
		require.NoError(t, w.Append(kv))
	}
	require.NoError(t, w.Close())
	r, err := hfile.Open(bytes.NewReader(buf.Bytes()), int64(buf.Len()), "f", hfile.ReaderOptions{})
	require.NoError(t, err)
	return NewStoreFileScanner(r, readPoint, 1, false)
}

// TestStoreScannerPlainAgainstModel checks the plain read path (one store
// file, newest version of every column, no filter: plainRow, both ways)
// against the model, with delete markers of every kind, versions the read
// point hides, and cells with TTL tags, live and expired, which plainRow
// hands to the matcher mid-row. A heap that starts with a memstore
// segment beside the file takes the plain path once the segment is done.
func TestStoreScannerPlainAgainstModel(t *testing.T) {
	for seed := uint64(0); seed < 300; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		kvs := randomStoreCells(rng, 300)
		now := int64(100)
		for _, kv := range kvs {
			if kv.Type == encoding.TypePut && rng.IntN(6) == 0 {
				// Expired (ts + ttl <= now) or alive.
				kv.Tags = ttlTag(now - kv.Timestamp + int64(rng.IntN(3)) - 1)
			}
		}
		readPoint := encoding.SeqNum(150 + rng.IntN(200))
		o := QueryOptions{MaxVersions: 1, NowMillis: now, ReuseCells: rng.IntN(2) == 0, Reversed: rng.IntN(2) == 0}
		if rng.IntN(2) == 0 {
			o.StartRow = []byte(fmt.Sprintf("r%02d", rng.IntN(30)))
			o.StartExclusive = rng.IntN(3) == 0
		}
		if rng.IntN(3) == 0 {
			o.StopRow = []byte(fmt.Sprintf("r%02d", rng.IntN(30)))
		}
		// The model: a cell whose TTL tag has passed is not there.
		var live []*encoding.KeyValue
		for _, kv := range kvs {
			if !kv.Expired(0, now) {
				live = append(live, kv)
			}
		}
		want := model(live, readPoint, o)
		for row := range want {
			if !inRange([]byte(row), o) {
				delete(want, row)
			}
		}
		// Half the time the rows read first are in a memstore segment: the
		// heap then holds two scanners until the segment is done.
		var fileKVs []*encoding.KeyValue
		seg := memstore.NewSegment(testCmp)
		withSeg := rng.IntN(2) == 0
		for _, kv := range kvs {
			if withSeg && (!o.Reversed && string(kv.Row) < "r05" || o.Reversed && string(kv.Row) > "r24") {
				seg.Add(kv)
			} else {
				fileKVs = append(fileKVs, kv)
			}
		}
		scanners := []KeyValueScanner{oneFile(t, fileKVs, readPoint, 64+rng.IntN(512))}
		if withSeg {
			scanners = append(scanners, NewMemStoreScanner(seg.NewScanner(readPoint), 100))
		}
		ss, err := NewStoreScanner(testCmp, scanners, o)
		require.NoError(t, err)
		require.True(t, ss.plain)
		got := readRows(t, ss, o.Reversed, seed)
		ss.Close()
		require.Equal(t, want, got, "seed %d, options %+v", seed, o)
	}
}

// TestPlainRowHandsOverMidColumn pins the two hand-overs plainRow makes
// within a row: a DeleteFamily marker behind the Put of the same (empty)
// qualifier, which masks the older cells of every later column, and a
// Put with tags after an included column.
func TestPlainRowHandsOverMidColumn(t *testing.T) {
	kv := func(q string, ts int64, typ encoding.Type, v string) *encoding.KeyValue {
		return &encoding.KeyValue{Row: []byte("r"), Family: []byte("f"), Qualifier: []byte(q), Timestamp: ts,
			Type: typ, SeqNum: 1, Value: []byte(v)}
	}
	tagged := kv("c", 9, encoding.TypePut, "c9")
	tagged.Tags = ttlTag(1000)
	kvs := []*encoding.KeyValue{
		kv("", 9, encoding.TypePut, "e9"),
		kv("", 5, encoding.TypeDeleteFamily, ""),
		kv("a", 7, encoding.TypePut, "a7"), // newer than the marker: seen
		kv("b", 4, encoding.TypePut, "b4"), // masked by the marker
		tagged,
		kv("c", 3, encoding.TypePut, "c3"), // an older version
		kv("d", 5, encoding.TypePut, "d5"), // masked
	}
	for _, reuse := range []bool{false, true} {
		for _, reversed := range []bool{false, true} {
			ss, err := NewStoreScanner(testCmp, []KeyValueScanner{oneFile(t, kvs, 10, 4096)},
				QueryOptions{MaxVersions: 1, NowMillis: 100, ReuseCells: reuse, Reversed: reversed})
			require.NoError(t, err)
			cells, ok, err := ss.NextRow(nil)
			require.NoError(t, err)
			require.True(t, ok)
			var got []string
			for _, c := range cells {
				got = append(got, fmt.Sprintf("%s=%s", c.Qualifier, c.Value))
			}
			require.Equal(t, []string{"=e9", "a=a7", "c=c9"}, got)
			require.Equal(t, tagged.Tags, cells[2].Tags)
			_, ok, err = ss.NextRow(nil)
			require.NoError(t, err)
			require.False(t, ok)
			ss.Close()
		}
	}
}

// TestPlainRowManyVersions: a column with more hidden versions than
// plainRow steps over is handed to the matcher, which seeks past the rest
// (across small blocks here); every row still gives its newest version of
// each column, in both directions.
func TestPlainRowManyVersions(t *testing.T) {
	var kvs []*encoding.KeyValue
	seq := encoding.SeqNum(1)
	for r := 0; r < 3; r++ {
		row := []byte(fmt.Sprintf("r%d", r))
		for _, q := range []string{"a", "b", "c"} {
			versions := 1
			if q != "b" {
				versions = 40
			}
			for ts := 1; ts <= versions; ts++ {
				kvs = append(kvs, &encoding.KeyValue{Row: row, Family: []byte("f"), Qualifier: []byte(q),
					Timestamp: int64(ts), Type: encoding.TypePut, SeqNum: seq, Value: []byte(fmt.Sprintf("%s%d", q, ts))})
				seq++
			}
		}
	}
	for _, reversed := range []bool{false, true} {
		ss, err := NewStoreScanner(testCmp, []KeyValueScanner{oneFile(t, kvs, seq, 256)},
			QueryOptions{MaxVersions: 1, Reversed: reversed})
		require.NoError(t, err)
		var got []string
		for {
			cells, ok, err := ss.NextRow(nil)
			require.NoError(t, err)
			if !ok {
				break
			}
			for _, c := range cells {
				got = append(got, fmt.Sprintf("%s/%s=%s", c.Row, c.Qualifier, c.Value))
			}
		}
		ss.Close()
		want := []string{"r0/a=a40", "r0/b=b1", "r0/c=c40", "r1/a=a40", "r1/b=b1", "r1/c=c40", "r2/a=a40", "r2/b=b1", "r2/c=c40"}
		if reversed {
			want = append(want[6:9:9], append(want[3:6:6], want[0:3]...)...)
		}
		require.Equal(t, want, got, "reversed=%t", reversed)
	}
}
