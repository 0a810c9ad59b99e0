package region

import (
	"encoding/binary"
	"math"
	"testing"
	"time"

	"github.com/regionkv/regionkv/encoding"
	"github.com/stretchr/testify/require"
)

// TestIncrementReadsMemstoreAlone: an Increment whose counter's newest
// version is a put in the memstore, newer than anything a store file holds,
// reads it from the memstore and opens no file; where a file may hold a
// newer version, or a delete marker or the TTL hides the memstore's, it
// reads through the store scanner and gets what a Get would.
func TestIncrementReadsMemstoreAlone(t *testing.T) {
	clock := time.UnixMilli(1_700_000_000_000)
	r := openTest(t, t.TempDir(), func(o *Options) {
		o.Families[0].TTL = time.Hour
		o.DisableAutoCompaction = true
		o.Now = func() time.Time { return clock }
	})
	defer r.Close()
	ctr := func(v int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(v)) }
	inc := func(row string, by int64) int64 {
		t.Helper()
		clock = clock.Add(time.Millisecond)
		res, err := r.Increment(NewIncrement(b(row)).Add(fam, b("n"), by))
		require.NoError(t, err)
		v := res.Value(fam, b("n"))
		require.Len(t, v, 8)
		return int64(binary.BigEndian.Uint64(v))
	}
	blocksRead := func() (n int64) {
		for _, f := range r.Store("f").Files() {
			n += f.Reader.BlocksRead()
		}
		return n
	}

	for i := 0; i < 5; i++ {
		inc("a", 1)
	}
	require.NoError(t, r.Flush())
	require.EqualValues(t, 6, inc("a", 1)) // the file's value; now the memstore's
	before := blocksRead()
	for i := 0; i < 100; i++ {
		inc("a", 1)
	}
	require.Equal(t, before, blocksRead(), "increments of a counter the memstore holds read the store file")
	require.EqualValues(t, 107, inc("a", 1))

	// A file holds a newer version than the memstore (a put at a future
	// time): the file's counts.
	p := NewPut(b("b")).AddAt(fam, b("n"), clock.Add(time.Minute).UnixMilli(), ctr(100))
	require.NoError(t, r.Put(p))
	require.NoError(t, r.Flush())
	require.NoError(t, r.Put(NewPut(b("b")).AddAt(fam, b("n"), 5, ctr(5))))
	require.EqualValues(t, 101, inc("b", 1))
	require.EqualValues(t, 102, inc("b", 1))

	// A file's delete marker hides the memstore's older put.
	require.NoError(t, r.Delete(NewDelete(b("c")).AddColumns(fam, b("n"), clock.UnixMilli())))
	require.NoError(t, r.Flush())
	require.NoError(t, r.Put(NewPut(b("c")).AddAt(fam, b("n"), clock.Add(-10*time.Millisecond).UnixMilli(), ctr(50))))
	require.EqualValues(t, 1, inc("c", 1))

	// The memstore's family delete marker, and its column delete marker.
	inc("d", 10)
	clock = clock.Add(time.Millisecond)
	require.NoError(t, r.Delete(NewDelete(b("d")).AddFamily(fam, encoding.LatestTimestamp)))
	require.EqualValues(t, 1, inc("d", 1))
	inc("e", 10)
	clock = clock.Add(time.Millisecond)
	require.NoError(t, r.Delete(NewDelete(b("e")).AddColumns(fam, b("n"), encoding.LatestTimestamp)))
	require.EqualValues(t, 1, inc("e", 1))

	// A counter older than the family's TTL is gone.
	require.NoError(t, r.Put(NewPut(b("f")).AddAt(fam, b("n"), clock.Add(-2*time.Hour).UnixMilli(), ctr(40))))
	require.EqualValues(t, 1, inc("f", 1))

	// Every counter reads the same through a Get.
	for row, want := range map[string]int64{"a": 107, "b": 102, "c": 1, "d": 1, "e": 1, "f": 1} {
		require.Equal(t, ctr(want), getValue(t, r, row, "f", "n"), row)
	}
}

// TestRMWReadFilesMaxTS checks the store's summary of its files' newest
// timestamp, which the read of a read-modify-write checks without the
// store's lock: it must follow flushes, compactions and reopens, and a
// file holding a newer version than the memstore's newest must send the
// read past the memstore.
func TestRMWReadFilesMaxTS(t *testing.T) {
	dir := t.TempDir()
	r := openTest(t, dir, func(o *Options) { o.DisableAutoCompaction = true })
	check := func(want int64) {
		t.Helper()
		s := r.Store("f")
		s.mu.RLock(0)
		defer s.mu.RUnlock(0)
		require.Equal(t, want, s.filesMaxTS.Load())
	}
	check(math.MinInt64)
	require.NoError(t, r.Put(NewPut(b("row")).AddAt(fam, b("q"), 100, b("new"))))
	require.NoError(t, r.Flush())
	check(100)
	// An older version, written later, is the memstore's newest; the
	// file's is the row's.
	require.NoError(t, r.Put(NewPut(b("row")).AddAt(fam, b("q"), 50, b("old"))))
	res, err := r.Append(NewAppend(b("row")).Add(fam, b("q"), b("+")))
	require.NoError(t, err)
	require.Equal(t, "new+", string(res.Value(fam, b("q"))))
	require.NoError(t, r.Put(NewPut(b("other")).AddAt(fam, b("q"), 300, b("x"))))
	require.NoError(t, r.Flush())
	appended := res.Cells[0].Timestamp // max(now, 100+1)
	check(max(int64(300), appended))
	require.NoError(t, r.Compact(true))
	require.Len(t, r.Store("f").Files(), 1)
	check(max(int64(300), appended))
	require.NoError(t, r.Close())
	r = openTest(t, dir, func(o *Options) { o.DisableAutoCompaction = true })
	defer r.Close()
	check(max(int64(300), appended))
}
