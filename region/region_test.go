package region

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/regionkv/regionkv/blockcache"
	"github.com/regionkv/regionkv/blockcache/hfileadapter"
	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/filter"
	"github.com/regionkv/regionkv/hfile"
	"github.com/regionkv/regionkv/scanner"
	"github.com/stretchr/testify/require"
)

var (
	fam  = []byte("f")
	fam2 = []byte("g")
)

func openTest(t *testing.T, dir string, mod func(*Options)) *Region {
	t.Helper()
	o := Options{Families: []FamilyOptions{{Name: "f", MaxVersions: 3}, {Name: "g", Encoding: encoding.EncodingFastDiff, Compression: hfile.CompressionSnappy}}}
	if mod != nil {
		mod(&o)
	}
	r, err := Open(dir, o)
	require.NoError(t, err)
	return r
}

func b(s string) []byte { return []byte(s) }

func getValue(t *testing.T, r *Region, row, f, q string) []byte {
	t.Helper()
	res, err := r.Get(NewGet(b(row)).AddColumn(b(f), b(q)))
	require.NoError(t, err)
	return res.Value(b(f), b(q))
}

func TestPutGetFlushReopen(t *testing.T) {
	dir := t.TempDir()
	r := openTest(t, dir, nil)
	for i := 0; i < 100; i++ {
		row := fmt.Sprintf("row%03d", i)
		require.NoError(t, r.Put(NewPut(b(row)).Add(fam, b("q"), b("v"+row)).Add(fam2, b("x"), b("w"+row))))
	}
	check := func(r *Region) {
		for i := 0; i < 100; i++ {
			row := fmt.Sprintf("row%03d", i)
			require.Equal(t, "v"+row, string(getValue(t, r, row, "f", "q")))
			require.Equal(t, "w"+row, string(getValue(t, r, row, "g", "x")))
			res, err := r.Get(NewGet(b(row)))
			require.NoError(t, err)
			require.Len(t, res.Cells, 2)
			require.Equal(t, "f", string(res.Cells[0].Family))
			require.Equal(t, "g", string(res.Cells[1].Family))
		}
		res, err := r.Get(NewGet(b("nosuchrow")))
		require.NoError(t, err)
		require.True(t, res.IsEmpty())
	}
	check(r)
	require.NoError(t, r.Flush())
	require.Equal(t, 2, r.Stats().StoreFiles)
	require.Zero(t, r.Stats().MemStoreSize)
	check(r)
	// More writes after the flush land in the memstore, above the files.
	require.NoError(t, r.Put(NewPut(b("row000")).Add(fam, b("q"), b("newer"))))
	require.Equal(t, "newer", string(getValue(t, r, "row000", "f", "q")))
	require.NoError(t, r.Close())

	// Reopen with no families: the stored descriptor supplies them.
	r2, err := Open(dir, Options{})
	require.NoError(t, err)
	defer r2.Close()
	require.Equal(t, "newer", string(getValue(t, r2, "row000", "f", "q")))
	require.Equal(t, "vrow001", string(getValue(t, r2, "row001", "f", "q")))
	require.Equal(t, encoding.EncodingFastDiff, r2.Store("g").Options().Encoding)
	for _, f := range r2.Store("g").Files() {
		require.Equal(t, encoding.EncodingFastDiff, f.Reader.Encoding())
		require.Equal(t, hfile.CompressionSnappy, f.Reader.Trailer().CompressionCodec)
	}
	_, err = r2.Get(NewGet(b("r")).AddFamily(b("nope")))
	require.ErrorIs(t, err, ErrNoSuchFamily)
	require.ErrorIs(t, r2.Put(NewPut(b("r")).Add(b("nope"), b("q"), b("v"))), ErrNoSuchFamily)
}

func TestVersionsAndTimeRange(t *testing.T) {
	r := openTest(t, t.TempDir(), nil)
	defer r.Close()
	for ts := int64(1); ts <= 5; ts++ {
		require.NoError(t, r.Put(NewPut(b("r")).AddAt(fam, b("q"), ts, b(fmt.Sprint("v", ts)))))
	}
	for _, flush := range []bool{false, true} {
		if flush {
			require.NoError(t, r.Flush())
		}
		res, err := r.Get(&Get{Row: b("r"), MaxVersions: 10})
		require.NoError(t, err)
		require.Len(t, res.Cells, 3, "family keeps 3 versions")
		require.EqualValues(t, 5, res.Cells[0].Timestamp)
		require.EqualValues(t, 3, res.Cells[2].Timestamp)
		res, err = r.Get(&Get{Row: b("r"), MaxVersions: 2, TimeRange: scanner.TimeRange{Min: 2, Max: 5}})
		require.NoError(t, err)
		require.Len(t, res.Cells, 2)
		require.Equal(t, "v4", string(res.Cells[0].Value))
		require.Equal(t, "v3", string(res.Cells[1].Value))
	}
	// Same timestamp twice: the later write wins.
	require.NoError(t, r.Put(NewPut(b("r")).AddAt(fam, b("q"), 5, b("again"))))
	res, err := r.Get(&Get{Row: b("r"), MaxVersions: 3})
	require.NoError(t, err)
	require.Equal(t, "again", string(res.Cells[0].Value))
	require.EqualValues(t, 4, res.Cells[1].Timestamp)
}

func TestDeleteKinds(t *testing.T) {
	r := openTest(t, t.TempDir(), nil)
	defer r.Close()
	put := func(q string, ts int64) {
		require.NoError(t, r.Put(NewPut(b("r")).AddAt(fam, b(q), ts, b(fmt.Sprint(q, ts)))))
	}
	versions := func(q string) []int64 {
		res, err := r.Get(&Get{Row: b("r"), MaxVersions: 3, Columns: []Column{{Family: fam, Qualifier: b(q)}}})
		require.NoError(t, err)
		var out []int64
		for _, c := range res.Cells {
			out = append(out, c.Timestamp)
		}
		return out
	}
	for _, q := range []string{"a", "b", "c", "d"} {
		for ts := int64(10); ts <= 30; ts += 10 {
			put(q, ts)
		}
	}
	require.NoError(t, r.Flush()) // deletes must mask cells in files too

	// Delete one version (explicit), and the latest version.
	require.NoError(t, r.Delete(NewDelete(b("r")).AddColumn(fam, b("a"), 20)))
	require.Equal(t, []int64{30, 10}, versions("a"))
	require.NoError(t, r.Delete(NewDelete(b("r")).AddColumn(fam, b("a"), encoding.LatestTimestamp)))
	require.Equal(t, []int64{10}, versions("a"))
	// DeleteColumn: every version <= ts.
	require.NoError(t, r.Delete(NewDelete(b("r")).AddColumns(fam, b("b"), 20)))
	require.Equal(t, []int64{30}, versions("b"))
	// DeleteFamilyVersion: every column at exactly ts.
	require.NoError(t, r.Delete(NewDelete(b("r")).AddFamilyVersion(fam, 30)))
	require.Equal(t, []int64{20, 10}, versions("c"))
	require.Empty(t, versions("b"))
	// DeleteFamily <= ts.
	require.NoError(t, r.Delete(NewDelete(b("r")).AddFamily(fam, 15)))
	require.Equal(t, []int64{20}, versions("d"))
	// Newer puts after a family delete are visible.
	put("d", 40)
	require.Equal(t, []int64{40, 20}, versions("d"))
	require.NoError(t, r.Flush())
	require.Equal(t, []int64{40, 20}, versions("d"))
	require.Equal(t, []int64{20}, versions("c"))

	// Whole-row delete covers every family.
	require.NoError(t, r.Put(NewPut(b("r")).Add(fam2, b("x"), b("y"))))
	time.Sleep(2 * time.Millisecond)
	require.NoError(t, r.Delete(NewDelete(b("r"))))
	res, err := r.Get(NewGet(b("r")))
	require.NoError(t, err)
	// Only the explicitly future-stamped cells (ts 40 < now? no: ts are tiny) are gone.
	require.True(t, res.IsEmpty(), "%v", res.Cells)
}

func TestIncrementAppendConcurrent(t *testing.T) {
	r := openTest(t, t.TempDir(), nil)
	defer r.Close()
	const goroutines, each = 64, 20
	var wg sync.WaitGroup
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				_, err := r.Increment(NewIncrement(b("ctr")).Add(fam, b("n"), 1).Add(fam, b("m"), 2))
				if err != nil {
					t.Error(err)
					return
				}
				if _, err := r.Append(NewAppend(b("log")).Add(fam, b("l"), b("x"))); err != nil {
					t.Error(err)
					return
				}
			}
		}(g)
	}
	wg.Wait()
	res, err := r.Get(NewGet(b("ctr")))
	require.NoError(t, err)
	require.EqualValues(t, goroutines*each, binary.BigEndian.Uint64(res.Value(fam, b("n"))))
	require.EqualValues(t, 2*goroutines*each, binary.BigEndian.Uint64(res.Value(fam, b("m"))))
	require.Len(t, getValue(t, r, "log", "f", "l"), goroutines*each)

	out, err := r.Increment(NewIncrement(b("ctr")).Add(fam, b("n"), -5))
	require.NoError(t, err)
	require.EqualValues(t, goroutines*each-5, binary.BigEndian.Uint64(out.Value(fam, b("n"))))
	// Not a long.
	_, err = r.Increment(NewIncrement(b("log")).Add(fam, b("l"), 1))
	require.ErrorContains(t, err, "is not a long")
}

func TestCheckAndMutate(t *testing.T) {
	r := openTest(t, t.TempDir(), nil)
	defer r.Close()
	row := b("r")
	cm := func(op filter.CompareOp, v string, put string) bool {
		var val []byte
		if v != "" {
			val = b(v)
		}
		ok, err := r.CheckAndMutate(&CheckAndMutate{Row: row, Family: fam, Qualifier: b("q"), Op: op, Value: val,
			Mutations: []Mutation{NewPut(row).Add(fam, b("q"), b(put))}})
		require.NoError(t, err)
		return ok
	}
	require.True(t, cm(filter.CompareEqual, "", "m"), "if not exists")
	require.False(t, cm(filter.CompareEqual, "", "x"), "exists now")
	require.Equal(t, "m", string(getValue(t, r, "row", "f", "q")[:0])+string(getValue(t, r, "r", "f", "q")))
	// "expected OP stored": Less passes when "a" < "m".
	require.True(t, cm(filter.CompareLess, "a", "n"))
	require.False(t, cm(filter.CompareLess, "z", "o"))
	require.True(t, cm(filter.CompareGreater, "z", "p"))
	require.True(t, cm(filter.CompareGreaterOrEqual, "p", "q2"))
	require.True(t, cm(filter.CompareLessOrEqual, "q2", "r"))
	require.True(t, cm(filter.CompareNotEqual, "x", "s"))
	require.False(t, cm(filter.CompareEqual, "x", "t"))
	require.True(t, cm(filter.CompareEqual, "s", "done"))
	require.Equal(t, "done", string(getValue(t, r, "r", "f", "q")))
	// A delete as the mutation.
	ok, err := r.CheckAndMutate(&CheckAndMutate{Row: row, Family: fam, Qualifier: b("q"), Op: filter.CompareEqual, Value: b("done"),
		Mutations: []Mutation{NewDelete(row).AddColumns(fam, b("q"), encoding.LatestTimestamp)}})
	require.NoError(t, err)
	require.True(t, ok)
	require.Nil(t, getValue(t, r, "r", "f", "q"))
	_, err = r.CheckAndMutate(&CheckAndMutate{Row: row, Family: fam, Qualifier: b("q"), Op: filter.CompareEqual,
		Mutations: []Mutation{NewPut(b("other")).Add(fam, b("q"), b("v"))}})
	require.Error(t, err)
}

func TestBatchAtomicAndLatestTimestamp(t *testing.T) {
	now := time.UnixMilli(1_700_000_000_000)
	r := openTest(t, t.TempDir(), func(o *Options) { o.Now = func() time.Time { return now } })
	defer r.Close()
	require.NoError(t, r.Batch([]Mutation{
		NewPut(b("a")).Add(fam, b("q"), b("1")),
		NewPut(b("b")).Add(fam, b("q"), b("2")),
		NewDelete(b("c")).AddColumns(fam, b("q"), encoding.LatestTimestamp),
	}))
	res, err := r.Get(NewGet(b("a")))
	require.NoError(t, err)
	require.EqualValues(t, now.UnixMilli(), res.Cells[0].Timestamp, "server-assigned timestamp")
	ra, _ := r.Get(NewGet(b("a")))
	rb, _ := r.Get(NewGet(b("b")))
	require.Equal(t, ra.Cells[0].SeqNum, rb.Cells[0].SeqNum, "one batch, one sequence id")
}

func TestTTL(t *testing.T) {
	now := time.UnixMilli(1_700_000_000_000)
	r, err := Open(t.TempDir(), Options{Families: []FamilyOptions{{Name: "f", TTL: time.Hour}}, Now: func() time.Time { return now }})
	require.NoError(t, err)
	defer r.Close()
	require.NoError(t, r.Put(NewPut(b("old")).AddAt(fam, b("q"), now.Add(-2*time.Hour).UnixMilli(), b("v"))))
	require.NoError(t, r.Put(NewPut(b("new")).AddAt(fam, b("q"), now.Add(-time.Minute).UnixMilli(), b("v"))))
	require.Nil(t, getValue(t, r, "old", "f", "q"))
	require.NotNil(t, getValue(t, r, "new", "f", "q"))
}

// TestReplayAfterAbandon leaves a region without closing it (its WAL
// written, nothing flushed) and opens the directory again: every write
// comes back from the WAL, above the flushed files.
func TestReplayAfterAbandon(t *testing.T) {
	dir := t.TempDir()
	r := openTest(t, dir, nil)
	for i := 0; i < 50; i++ {
		require.NoError(t, r.Put(NewPut(b(fmt.Sprintf("r%02d", i))).Add(fam, b("q"), b("a"))))
	}
	require.NoError(t, r.Flush())
	for i := 0; i < 50; i++ {
		require.NoError(t, r.Put(NewPut(b(fmt.Sprintf("r%02d", i))).Add(fam, b("q"), b("b"))))
	}
	require.NoError(t, r.Delete(NewDelete(b("r07"))))
	// Abandon r: stop its background goroutine but do not flush or close.
	r.closed.Store(true)
	r.bgCancel()
	close(r.stop)
	<-r.bgDone
	<-r.compactDone
	// A second open of a live region is refused...
	_, err := Open(dir, Options{})
	require.ErrorIs(t, err, ErrLocked)
	// ...and a crashed process's lock goes with it.
	r.lock.Close()

	r2 := openTest(t, dir, nil)
	defer r2.Close()
	for i := 0; i < 50; i++ {
		v := getValue(t, r2, fmt.Sprintf("r%02d", i), "f", "q")
		if i == 7 {
			require.Nil(t, v)
			continue
		}
		require.Equal(t, "b", string(v), "row %d", i)
	}
	// New writes continue above the replayed sequence ids.
	require.NoError(t, r2.Put(NewPut(b("r01")).Add(fam, b("q"), b("c"))))
	require.Equal(t, "c", string(getValue(t, r2, "r01", "f", "q")))
}

// TestFlushUnderLoadBoundsMemory writes with a tiny flush size: background
// flushes keep the memstore near it, and blocking stops it from growing
// past the multiplier.
func TestFlushUnderLoadBoundsMemory(t *testing.T) {
	r := openTest(t, t.TempDir(), func(o *Options) { o.FlushSize = 32 << 10; o.BlockingMultiplier = 2 })
	defer r.Close()
	var wg sync.WaitGroup
	var peak int64
	var mu sync.Mutex
	val := make([]byte, 200)
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 500; i++ {
				if err := r.Put(NewPut(b(fmt.Sprintf("g%d-%04d", g, i))).Add(fam, b("q"), val)); err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				peak = max(peak, r.memSize.Load())
				mu.Unlock()
			}
		}(g)
	}
	wg.Wait()
	st := r.Stats()
	require.Greater(t, st.Flushes, int64(3))
	// The limit is checked before each write, so it can be passed by at most
	// one write per writer.
	require.LessOrEqual(t, peak, int64(2*(32<<10)+4*400))
	for g := 0; g < 4; g++ {
		require.Len(t, getValue(t, r, fmt.Sprintf("g%d-0499", g), "f", "q"), 200)
	}
	ents, err := os.ReadDir(filepath.Join(r.Dir(), "wal"))
	require.NoError(t, err)
	require.Less(t, len(ents), 5, "flushed WAL segments are pruned")
}

// TestCellTTL: a Put's TTL travels with its cells (HBase's TTL tag) through
// the memstore, a flush, a reopen (WAL replay) and a compaction.
func TestCellTTL(t *testing.T) {
	now := time.UnixMilli(1_700_000_000_000)
	clock := func() time.Time { return now }
	dir := t.TempDir()
	r, err := Open(dir, Options{Families: []FamilyOptions{{Name: "f", MaxVersions: 2}}, Now: clock, DisableAutoCompaction: true})
	require.NoError(t, err)
	p := NewPut(b("r")).AddAt(fam, b("q"), now.UnixMilli()-10, b("old"))
	require.NoError(t, r.Put(p))
	p = NewPut(b("r")).AddAt(fam, b("q"), now.UnixMilli(), b("short-lived"))
	p.TTL = time.Minute
	require.NoError(t, r.Put(p))
	require.Equal(t, "short-lived", string(getValue(t, r, "r", "f", "q")))
	require.NoError(t, r.Flush())
	require.NoError(t, r.Put(NewPut(b("s")).AddAt(fam, b("q"), now.UnixMilli(), b("x"))))
	r.closed.Store(true) // abandon: the second put comes back from the WAL
	r.bgCancel()
	close(r.stop)
	<-r.bgDone
	<-r.compactDone
	r.lock.Close()

	now = now.Add(2 * time.Minute)
	r, err = Open(dir, Options{Now: clock, DisableAutoCompaction: true})
	require.NoError(t, err)
	defer r.Close()
	// The short-lived version expired; the older one, without a TTL, shows.
	require.Equal(t, "old", string(getValue(t, r, "r", "f", "q")))
	require.Equal(t, "x", string(getValue(t, r, "s", "f", "q")))
	require.NoError(t, r.Compact(true))
	cells, _ := countFileCells(t, r, "f")
	require.Equal(t, 1, cells, "the major compaction dropped the expired cell")
	require.Equal(t, "old", string(getValue(t, r, "r", "f", "q")))
}

// TestBloomSkipsFilesOnGet: a Get for a row a file's ROW bloom rules out
// reads no data block of that file. Data blocks are kept out of the cache,
// so every file a Get consults costs a block read.
func TestBloomSkipsFilesOnGet(t *testing.T) {
	blocksFor := func(noBloom bool) int64 {
		cache := newMapCache()
		cache.noData = true
		r, err := Open(t.TempDir(), Options{Families: []FamilyOptions{{Name: "f", NoBloom: noBloom}},
			DisableAutoCompaction: true, BlockCache: cache})
		require.NoError(t, err)
		defer r.Close()
		for f := 0; f < 3; f++ {
			for i := 0; i < 200; i++ {
				require.NoError(t, r.Put(NewPut(b(fmt.Sprintf("f%d-r%03d", f, i))).Add(fam, b("q"), b("v"))))
			}
			require.NoError(t, r.Flush())
		}
		files := r.Store("f").Files()
		require.Len(t, files, 3)
		total := func() (n int64) {
			for _, f := range files {
				n += f.Reader.BlocksRead()
			}
			return n
		}
		before := total()
		for i := 0; i < 200; i++ {
			// Between the rows of the files, so every file's key range covers it.
			res, err := r.Get(NewGet(b(fmt.Sprintf("f%d-r%03dx", i%3, i))).AddFamily(fam))
			require.NoError(t, err)
			require.True(t, res.IsEmpty())
		}
		res, err := r.Get(NewGet(b("f1-r007")))
		require.NoError(t, err)
		require.False(t, res.IsEmpty())
		return total() - before
	}
	withBloom, without := blocksFor(false), blocksFor(true)
	t.Logf("blocks read for 200 Gets of absent rows over 3 files: %d with ROW blooms, %d without", withBloom, without)
	require.GreaterOrEqual(t, without, int64(600))
	// The bloom chunks once each, and a data block per false positive (~1%).
	require.Less(t, withBloom, int64(30))
}

// TestBloomDeferredInOneFileStore: in a store of one file, a Get asks the
// bloom only when its data block is not cached. An absent row still reads
// no data block when none is cached, and a Get whose block is cached makes
// the lookups of a family without a bloom, no more.
func TestBloomDeferredInOneFileStore(t *testing.T) {
	write := func(t *testing.T, r *Region) {
		for i := 0; i < 500; i++ {
			require.NoError(t, r.Put(NewPut(b(fmt.Sprintf("r%03d", i))).Add(fam, b("q"), make([]byte, 100))))
		}
		require.NoError(t, r.Flush())
		require.Len(t, r.Store("f").Files(), 1)
	}
	t.Run("uncached", func(t *testing.T) {
		cache := newMapCache()
		cache.noData = true
		r, err := Open(t.TempDir(), Options{Families: []FamilyOptions{{Name: "f"}}, DisableAutoCompaction: true, BlockCache: cache})
		require.NoError(t, err)
		defer r.Close()
		write(t, r)
		f := r.Store("f").Files()[0]
		before := f.Reader.BlocksRead()
		for i := 0; i < 200; i++ {
			res, err := r.Get(NewGet(b(fmt.Sprintf("r%03dx", i))))
			require.NoError(t, err)
			require.True(t, res.IsEmpty())
		}
		// The bloom chunk once, and a data block per false positive (~1%).
		require.Less(t, f.Reader.BlocksRead()-before, int64(10))
		res, err := r.Get(NewGet(b("r007")))
		require.NoError(t, err)
		require.Len(t, res.Cells, 1)
	})
	// lookups returns the cache lookups of Gets of present rows and of absent
	// ones, once a scan has cached every block. (The first row is left out:
	// its Get seeks before the first index key, and asks the bloom.)
	lookups := func(t *testing.T, noBloom bool) (present, absent, withMem int64) {
		bo := blockcache.DefaultOptions()
		require.NoError(t, bo.SetConfig("hfile.block.cache.size", "8m"))
		c, err := hfileadapter.New(bo)
		require.NoError(t, err)
		defer c.Close()
		// Without reference counts, the readers pin no index or bloom
		// blocks (hfile's pin.go), so that every lookup reaches the
		// cache's counters.
		r, err := Open(t.TempDir(), Options{Families: []FamilyOptions{{Name: "f", NoBloom: noBloom}},
			DisableAutoCompaction: true, BlockCache: lookupsOnly{c}})
		require.NoError(t, err)
		defer r.Close()
		write(t, r)
		rows, _ := scanAll(t, r, &Scan{}) // caches every block
		require.Len(t, rows, 500)
		count := func(row func(int) string, found bool) int64 {
			st := c.Stats()
			for i := 1; i < 500; i++ {
				res, err := r.Get(NewGet(b(row(i))))
				require.NoError(t, err)
				require.Equal(t, found, !res.IsEmpty(), row(i))
			}
			after := c.Stats()
			require.Equal(t, st.MissCount, after.MissCount, "every block is cached")
			return after.HitCount - st.HitCount
		}
		present = count(func(i int) string { return fmt.Sprintf("r%03d", i) }, true)
		absent = count(func(i int) string { return fmt.Sprintf("r%03dx", i) }, false)
		require.NoError(t, r.Put(NewPut(b("zzz")).Add(fam, b("q"), b("v"))))
		_, err = r.Get(NewGet(b("r000"))) // brings the bloom chunk into the cache
		require.NoError(t, err)
		withMem = count(func(i int) string { return fmt.Sprintf("r%03d", i) }, true)
		return present, absent, withMem
	}
	withBloom, withBloomAbsent, withBloomMem := lookups(t, false)
	without, withoutAbsent, withoutMem := lookups(t, true)
	require.Equal(t, without, withBloom, "a Get of a cached block does not ask the bloom")
	require.Equal(t, withoutAbsent, withBloomAbsent)
	require.GreaterOrEqual(t, without, int64(499))
	// With a cell in the memstore the row may be one the file lacks: the
	// bloom is asked first, one chunk lookup more per Get.
	require.Equal(t, withoutMem+499, withBloomMem, "with memstore cells the bloom is asked first")
}

// lookupsOnly is a block cache that says it does not count references.
type lookupsOnly struct{ hfileadapter.Cache }

func (lookupsOnly) CountsBlockRefs() bool { return false }

// mapCache is an unbounded hfile.Cache for tests.
type mapCache struct {
	mu     sync.Mutex
	m      map[[2]int64]*hfile.Block
	noData bool // cache index and bloom blocks only
}

func newMapCache() *mapCache { return &mapCache{m: map[[2]int64]*hfile.Block{}} }

func (c *mapCache) GetBlock(file uint64, off int64) *hfile.Block {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[[2]int64{int64(file), off}]
}

func (c *mapCache) CacheBlock(file uint64, off int64, b *hfile.Block, _ bool) {
	if c.noData && b.Type.IsData() {
		return
	}
	c.mu.Lock()
	c.m[[2]int64{int64(file), off}] = b
	c.mu.Unlock()
}

// TestGetReadsClockOnlyForTTL: a Get reads the region's clock only where a
// TTL needs it (a family's, or a cell's own), once per family read, and
// still judges TTL by it: a Get of plain cells in a family without one
// takes no clock read.
func TestGetReadsClockOnlyForTTL(t *testing.T) {
	var reads atomic.Int64
	now := time.UnixMilli(1_700_000_000_000)
	var clockMu sync.Mutex
	r, err := Open(t.TempDir(), Options{
		Families: []FamilyOptions{{Name: "f"}, {Name: "t", TTL: time.Hour}},
		// The compactor, woken by the flush, reads the clock to see whether
		// a major compaction is due; counted during a Get, those reads made
		// this test fail now and then.
		DisableAutoCompaction: true,
		Now: func() time.Time {
			reads.Add(1)
			clockMu.Lock()
			defer clockMu.Unlock()
			return now
		},
	})
	require.NoError(t, err)
	defer r.Close()
	require.NoError(t, r.Put(NewPut(b("plain")).AddAt(b("f"), b("q"), 1_700_000_000_000, b("v"))))
	require.NoError(t, r.Put(NewPut(b("ttl")).AddAt(b("t"), b("q"), 1_700_000_000_000, b("v"))))
	p := NewPut(b("tagged")).AddAt(b("f"), b("q"), 1_700_000_000_000, b("v"))
	p.TTL = time.Minute
	require.NoError(t, r.Put(p))
	for _, flush := range []bool{false, true} {
		if flush {
			require.NoError(t, r.Flush())
		}
		get := func(row, fam string) (int64, []byte) {
			before := reads.Load()
			v := getValue(t, r, row, fam, "q")
			return reads.Load() - before, v
		}
		n, v := get("plain", "f")
		require.Zero(t, n, "flushed=%v", flush)
		require.Equal(t, b("v"), v)
		n, v = get("ttl", "t")
		require.Equal(t, int64(1), n, "flushed=%v", flush)
		require.Equal(t, b("v"), v)
		n, v = get("tagged", "f")
		require.Equal(t, int64(1), n, "flushed=%v", flush)
		require.Equal(t, b("v"), v)
	}
	clockMu.Lock()
	now = now.Add(2 * time.Minute)
	clockMu.Unlock()
	require.Nil(t, getValue(t, r, "tagged", "f", "q"), "the cell's own TTL has passed")
	require.Equal(t, b("v"), getValue(t, r, "ttl", "t", "q"))
	clockMu.Lock()
	now = now.Add(time.Hour)
	clockMu.Unlock()
	require.Nil(t, getValue(t, r, "ttl", "t", "q"), "the family's TTL has passed")
	require.Equal(t, b("v"), getValue(t, r, "plain", "f", "q"))
}

// TestFlushOverwritten: a flush of a memstore of overwritten columns writes
// each column's newest version. Without delete markers or tags in the
// snapshot it makes no pass over every cell (see Store.flushCells), and the
// file has no tags; with them, the markers are written and so are the tags.
func TestFlushOverwritten(t *testing.T) {
	r, err := Open(t.TempDir(), Options{Families: []FamilyOptions{{Name: "f"}}, DisableAutoCompaction: true})
	require.NoError(t, err)
	defer r.Close()
	for v := 1; v <= 10; v++ {
		for row := 0; row < 50; row++ {
			require.NoError(t, r.Put(NewPut(fmt.Appendf(nil, "r%02d", row)).AddAt(fam, b("q"), int64(v), fmt.Appendf(nil, "v%d", v))))
		}
	}
	require.NoError(t, r.Flush())
	files := r.Store("f").Files()
	require.Len(t, files, 1)
	require.False(t, files[0].Reader.Format().IncludesTags, "no cell had tags")
	cells, deletes := countFileCells(t, r, "f")
	require.Equal(t, 50, cells, "one version per column")
	require.Zero(t, deletes)
	require.Equal(t, "v10", string(getValue(t, r, "r07", "f", "q")))

	// Overwrites with a marker and a tagged cell (a cell TTL) among them.
	for v := 11; v <= 13; v++ {
		for row := 0; row < 50; row++ {
			p := NewPut(fmt.Appendf(nil, "r%02d", row)).AddAt(fam, b("q"), int64(v), fmt.Appendf(nil, "v%d", v))
			if row == 3 && v == 13 {
				p.TTL = 100 * 365 * 24 * time.Hour // from timestamp 13 ms
			}
			require.NoError(t, r.Put(p))
		}
	}
	require.NoError(t, r.Delete(NewDelete(b("r05")).AddColumns(fam, b("q"), 12)))
	require.NoError(t, r.Flush())
	files = r.Store("f").Files()
	require.Len(t, files, 2)
	var tagged int
	for _, f := range files {
		if f.Reader.Format().IncludesTags {
			tagged++
		}
	}
	require.Equal(t, 1, tagged, "the second flush had a tagged cell")
	cells, deletes = countFileCells(t, r, "f")
	require.Equal(t, 50+50+1, cells, "one version per column of each flush, and the marker")
	require.Equal(t, 1, deletes)
	require.Equal(t, "v13", string(getValue(t, r, "r03", "f", "q")))
	require.Equal(t, "v13", string(getValue(t, r, "r05", "f", "q")), "the marker masks v12 and older only")
	require.Equal(t, "v13", string(getValue(t, r, "r49", "f", "q")))
}
