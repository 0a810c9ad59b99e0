package region

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/filter"
	"github.com/regionkv/regionkv/hfile"
	"github.com/regionkv/regionkv/scanner"
	"github.com/stretchr/testify/require"
)

// minVersionsRegion opens a region whose family "f" has VERSIONS 1000,
// MIN_VERSIONS minVersions and a TTL of one second, on a clock the test
// moves. ts is two seconds before the clock's start: versions stamped
// around it have expired.
func minVersionsRegion(t *testing.T, minVersions int) (r *Region, clock *atomic.Int64, ts int64) {
	t.Helper()
	clock = &atomic.Int64{}
	clock.Store(1_700_000_000_000)
	r, err := Open(t.TempDir(), Options{
		Families:              []FamilyOptions{{Name: "f", MaxVersions: 1000, MinVersions: minVersions, TTL: time.Second}},
		Now:                   func() time.Time { return time.UnixMilli(clock.Load()) },
		DisableAutoCompaction: true,
	})
	require.NoError(t, err)
	t.Cleanup(func() { r.Close() })
	return r, clock, clock.Load() - 2000
}

// values returns the values a Get returns of f:q, newest first.
func values(t *testing.T, r *Region, g *Get) []string {
	t.Helper()
	res, err := r.Get(g)
	require.NoError(t, err)
	var out []string
	for _, c := range res.Cells {
		out = append(out, string(c.Value))
	}
	return out
}

func allVersions(row string) *Get { return &Get{Row: b(row), MaxVersions: 1 << 20} }

func inRange(row string, lo, hi int64) *Get {
	return &Get{Row: b(row), MaxVersions: 1, TimeRange: scanner.TimeRange{Min: lo, Max: hi}}
}

// TestMinVersionsBaseCase is HBase's TestMinVersions.testBaseCase: with
// MIN_VERSIONS 2 the two newest versions outlive the TTL; a time range
// still finds older ones until a flush drops them, and a major compaction
// keeps only the two.
func TestMinVersionsBaseCase(t *testing.T) {
	r, _, ts := minVersionsRegion(t, 2)
	for i, v := range []string{"T1", "T2", "T3", "T4"} {
		require.NoError(t, r.Put(NewPut(b("r")).AddAt(fam, b("q"), ts-3+int64(i), b(v))))
	}
	require.Equal(t, []string{"T4"}, values(t, r, NewGet(b("r"))))
	require.Equal(t, []string{"T4"}, values(t, r, inRange("r", 0, ts+1)))
	// Versions are counted within the time range: the oldest is the first.
	require.Equal(t, []string{"T1"}, values(t, r, inRange("r", 0, ts-2)))
	require.Equal(t, []string{"T4", "T3"}, values(t, r, allVersions("r")))
	require.Equal(t, []string{"T4", "T3"}, values(t, r, allVersions("r").AddColumn(fam, b("q"))))

	// The flush keeps what a read of every version returns: T4 and T3.
	require.NoError(t, r.Flush())
	require.Empty(t, values(t, r, inRange("r", 0, ts-2)))
	cells, _ := countFileCells(t, r, "f")
	require.Equal(t, 2, cells)

	require.NoError(t, r.Compact(true))
	require.Equal(t, []string{"T4"}, values(t, r, inRange("r", 0, ts+1)))
	require.Equal(t, []string{"T3"}, values(t, r, inRange("r", 0, ts)))
	require.Empty(t, values(t, r, inRange("r", 0, ts-1)))
	require.Equal(t, []string{"T4", "T3"}, values(t, r, allVersions("r")))
}

// TestMinVersionsStoreAndMemStore is HBase's testStoreMemStore: the
// versions counted come from the memstore and a file together.
func TestMinVersionsStoreAndMemStore(t *testing.T) {
	r, _, ts := minVersionsRegion(t, 3)
	put := func(at int64, v string) {
		require.NoError(t, r.Put(NewPut(b("r")).AddAt(fam, b("q"), at, b(v))))
	}
	put(ts-1, "T2")
	put(ts-3, "T0")
	require.NoError(t, r.Flush())
	require.NoError(t, r.Compact(true))
	put(ts, "T3")
	put(ts-2, "T1")
	put(ts-3, "T0")
	require.Equal(t, []string{"T3", "T2", "T1"}, values(t, r, allVersions("r")))
	require.Equal(t, []string{"T3", "T2", "T1"}, values(t, r, allVersions("r").AddColumn(fam, b("q"))))
}

// TestMinVersionsDeletes is HBase's testDelete: deleted versions are not
// among the MIN_VERSIONS kept.
func TestMinVersionsDeletes(t *testing.T) {
	r, _, ts := minVersionsRegion(t, 3)
	for i, v := range []string{"T1", "T2", "T3"} {
		require.NoError(t, r.Put(NewPut(b("r")).AddAt(fam, b("q"), ts-2+int64(i), b(v))))
	}
	require.NoError(t, r.Delete(NewDelete(b("r")).AddFamily(fam, ts-1)))
	check := func(stage string) {
		require.Equal(t, []string{"T3"}, values(t, r, allVersions("r")), stage)
		require.Equal(t, []string{"T3"}, values(t, r, allVersions("r").AddColumn(fam, b("q"))), stage)
	}
	check("memstore")
	require.NoError(t, r.Flush())
	check("flushed")
	require.NoError(t, r.Compact(true))
	check("major compacted")
}

// TestMinVersionsFreshFirst: the versions inside the TTL are all returned
// (up to VERSIONS); expired ones only to make up MIN_VERSIONS. The column
// named or not makes no difference (HBase's ExplicitColumnTracker returns
// one expired version more there; see the README).
func TestMinVersionsFreshFirst(t *testing.T) {
	r, clock, ts := minVersionsRegion(t, 2)
	now := clock.Load()
	put := func(at int64, v string) {
		require.NoError(t, r.Put(NewPut(b("r")).AddAt(fam, b("q"), at, b(v))))
	}
	put(ts-2, "old1")
	put(ts-1, "old2")
	put(now-100, "fresh1")
	put(now, "fresh2")
	put(now+100, "fresh3")
	for _, g := range []*Get{allVersions("r"), allVersions("r").AddColumn(fam, b("q"))} {
		require.Equal(t, []string{"fresh3", "fresh2", "fresh1"}, values(t, r, g))
	}
	// A Get's MaxVersions caps them; MIN_VERSIONS does not raise it.
	g := allVersions("r")
	g.MaxVersions = 1
	require.Equal(t, []string{"fresh3"}, values(t, r, g))

	// A second later fresh1 has expired too; fresh2 is just inside.
	clock.Add(1000)
	require.Equal(t, []string{"fresh3", "fresh2"}, values(t, r, allVersions("r")))
	clock.Add(10_000) // everything has expired
	require.Equal(t, []string{"fresh3", "fresh2"}, values(t, r, allVersions("r")))
	require.NoError(t, r.Flush())
	require.NoError(t, r.Compact(true))
	cells, _ := countFileCells(t, r, "f")
	require.Equal(t, 2, cells)
}

// TestMinVersionsFilter is HBase's testFilters: versions are counted
// before the filter sees them, so a filter cannot reach past MIN_VERSIONS
// into the expired ones.
func TestMinVersionsFilter(t *testing.T) {
	r, _, ts := minVersionsRegion(t, 2)
	for i, v := range []string{"T0", "T1", "T2", "T3"} {
		require.NoError(t, r.Put(NewPut(b("r")).AddAt(fam, b("q"), ts-3+int64(i), b(v))))
	}
	for _, stage := range []string{"memstore", "compacted"} {
		for _, v := range []string{"T2", "T1"} {
			g := allVersions("r")
			g.Filter = filter.NewValueFilter(filter.CompareEqual, filter.NewBinaryComparator(b(v)))
			want := []string(nil)
			if v == "T2" {
				want = []string{"T2"} // the second version, within MIN_VERSIONS
			}
			require.Equal(t, want, values(t, r, g), "%s, value %s", stage, v)
		}
		require.NoError(t, r.Flush())
		require.NoError(t, r.Compact(true))
	}
}

// TestMinVersionsCellTTL: a cell's own TTL (HBase's TTL tag) is not
// overridden by MIN_VERSIONS, and such a cell is not counted.
func TestMinVersionsCellTTL(t *testing.T) {
	r, clock, ts := minVersionsRegion(t, 1)
	now := clock.Load()
	require.NoError(t, r.Put(NewPut(b("r")).AddAt(fam, b("q"), ts, b("old"))))
	p := NewPut(b("r")).AddAt(fam, b("q"), now, b("short-lived"))
	p.TTL = 100 * time.Millisecond
	require.NoError(t, r.Put(p))
	require.Equal(t, []string{"short-lived"}, values(t, r, allVersions("r")))
	clock.Add(5000)
	require.Equal(t, []string{"old"}, values(t, r, allVersions("r")))
}

// TestMinVersionsMinorCompactionKeepsExpired: a minor compaction keeps the
// expired versions of a family with MIN_VERSIONS (a read with a time range
// may still return them), and the major one drops them.
func TestMinVersionsMinorCompactionKeepsExpired(t *testing.T) {
	r, clock, _ := minVersionsRegion(t, 1)
	// Written while fresh, so that the flushes keep them.
	now := clock.Load()
	for i := int64(0); i < 3; i++ {
		require.NoError(t, r.Put(NewPut(b("r")).AddAt(fam, b("q"), now-10+i, []byte{byte('a' + i)})))
		require.NoError(t, r.Flush())
	}
	clock.Add(5000)
	require.Equal(t, []string{"c"}, values(t, r, allVersions("r")))
	require.Equal(t, []string{"a"}, values(t, r, inRange("r", 0, now-9)))
	// Three small files: the exploring policy picks them all, which makes
	// a major compaction; so pick two by hand.
	st := r.Store("f")
	st.compactMu.Lock()
	_, _, err := st.compact(r.bgCtx, st.Files()[:2], false, filepath.Join(r.dir, ".tmp"), r.now(), &throttle{})
	st.compactMu.Unlock()
	require.NoError(t, err)
	require.Len(t, st.Files(), 2)
	cells, _ := countFileCells(t, r, "f")
	require.Equal(t, 3, cells)
	require.Equal(t, []string{"a"}, values(t, r, inRange("r", 0, now-9)))
	require.NoError(t, r.Compact(true))
	cells, _ = countFileCells(t, r, "f")
	require.Equal(t, 1, cells)
	require.Empty(t, values(t, r, inRange("r", 0, now-9)))
}

// TestMinVersionsFlushOfExpiredOnly: a flush whose cells have all expired
// (no MIN_VERSIONS) still writes a file, without cells, so that the WAL is
// not replayed over them.
func TestMinVersionsFlushOfExpiredOnly(t *testing.T) {
	dir := t.TempDir()
	now := time.UnixMilli(1_700_000_000_000)
	opts := Options{Families: []FamilyOptions{{Name: "f", TTL: time.Hour}}, Now: func() time.Time { return now },
		DisableAutoCompaction: true}
	r, err := Open(dir, opts)
	require.NoError(t, err)
	require.NoError(t, r.Put(NewPut(b("old")).AddAt(fam, b("q"), now.Add(-2*time.Hour).UnixMilli(), b("v"))))
	require.NoError(t, r.Flush())
	require.Len(t, r.Store("f").Files(), 1)
	cells, _ := countFileCells(t, r, "f")
	require.Zero(t, cells)
	require.NoError(t, r.Close())
	r, err = Open(dir, opts)
	require.NoError(t, err)
	defer r.Close()
	require.Zero(t, r.memSize.Load(), "nothing replayed")
}

// TestMinVersionsValidation: MIN_VERSIONS may not be negative or exceed
// VERSIONS (HBase's TableDescriptorChecker).
func TestMinVersionsValidation(t *testing.T) {
	for _, f := range []FamilyOptions{
		{Name: "f", MinVersions: -1},
		{Name: "f", MinVersions: 2},                 // VERSIONS defaults to 1
		{Name: "f", MaxVersions: 3, MinVersions: 4}, // HBASE-13776
		{Name: "f", CompactionCompression: OverrideCompression(hfile.CompressionLZO)},
	} {
		_, err := Open(t.TempDir(), Options{Families: []FamilyOptions{f}})
		require.True(t, errors.Is(err, ErrInvalidArgument), "%+v: %v", f, err)
	}
	r, err := Open(t.TempDir(), Options{Families: []FamilyOptions{{Name: "f", MaxVersions: 3, MinVersions: 3}}})
	require.NoError(t, err)
	require.NoError(t, r.Close())
}

// TestFamilyOptionsPersisted: the options added since the first
// .regioninfo format survive a reopen that leaves Families empty, and are
// absent from the file at their defaults.
func TestFamilyOptionsPersisted(t *testing.T) {
	dir := t.TempDir()
	want := []FamilyOptions{
		{Name: "a", MaxVersions: 5, MinVersions: 2, TTL: time.Hour, NoBlockCache: true,
			CompactionCompression:      OverrideCompression(CompressionGZ),
			MajorCompactionCompression: OverrideCompression(CompressionNone),
			MinorCompactionCompression: OverrideCompression(CompressionZstd)},
		{Name: "b"},
	}
	r, err := Open(dir, Options{Families: want})
	require.NoError(t, err)
	require.NoError(t, r.Close())
	r, err = Open(dir, Options{})
	require.NoError(t, err)
	got := r.Families()
	require.NoError(t, r.Close())
	require.Equal(t, 2, got[0].MinVersions)
	require.True(t, got[0].NoBlockCache)
	require.Equal(t, want[0].CompactionCompression, got[0].CompactionCompression)
	require.Equal(t, want[0].MajorCompactionCompression, got[0].MajorCompactionCompression)
	require.Equal(t, want[0].MinorCompactionCompression, got[0].MinorCompactionCompression)
	require.Zero(t, got[1].MinVersions)
	require.False(t, got[1].NoBlockCache)
	require.False(t, got[1].CompactionCompression.Set)

	raw, err := os.ReadFile(filepath.Join(dir, descriptorFile))
	require.NoError(t, err)
	var desc struct{ Families []map[string]any }
	require.NoError(t, json.Unmarshal(raw, &desc))
	require.EqualValues(t, 2, desc.Families[0]["MinVersions"])
	for _, k := range []string{"MinVersions", "NoBlockCache", "CompactionCompression"} {
		require.NotContains(t, desc.Families[1], k)
	}
}

// TestNoBlockCache: BLOCKCACHE=false keeps a family's data blocks out of
// the cache; its index and bloom blocks, and the other family's data
// blocks, go in.
func TestNoBlockCache(t *testing.T) {
	cache := newMapCache()
	r, err := Open(t.TempDir(), Options{
		Families:   []FamilyOptions{{Name: "f", NoBlockCache: true}, {Name: "g"}},
		BlockCache: cache, DisableAutoCompaction: true,
	})
	require.NoError(t, err)
	defer r.Close()
	require.NoError(t, r.Put(NewPut(b("r")).Add(fam, b("q"), b("v")).Add(fam2, b("q"), b("v"))))
	require.NoError(t, r.Flush())
	require.Equal(t, "v", string(getValue(t, r, "r", "f", "q")))
	require.Equal(t, "v", string(getValue(t, r, "r", "g", "q")))
	sc, err := r.NewScanner(&Scan{})
	require.NoError(t, err)
	for res, err := sc.Next(); res != nil || err != nil; res, err = sc.Next() {
		require.NoError(t, err)
	}
	sc.Close()
	blocks := func(family string) (data, other int) {
		id := r.Store(family).Files()[0].id
		cache.mu.Lock()
		defer cache.mu.Unlock()
		for k, blk := range cache.m {
			if uint64(k[0]) != id {
				continue
			}
			if blk.Type.IsData() {
				data++
			} else {
				other++
			}
		}
		return data, other
	}
	data, other := blocks("f")
	require.Zero(t, data, "BLOCKCACHE=false")
	require.Positive(t, other, "index and bloom blocks are cached")
	data, _ = blocks("g")
	require.Positive(t, data)
}

// TestCompactionCompression: COMPRESSION_COMPACT and its _MAJOR / _MINOR
// forms pick the codec of compaction outputs; flushes keep COMPRESSION.
func TestCompactionCompression(t *testing.T) {
	codec := func(r *Region) hfile.Compression {
		files := r.Store("f").Files()
		require.Len(t, files, 1)
		return files[0].Reader.Trailer().CompressionCodec
	}
	for _, tc := range []struct {
		fo           FamilyOptions
		major, minor hfile.Compression
	}{
		{FamilyOptions{Compression: CompressionSnappy}, CompressionSnappy, CompressionSnappy},
		{FamilyOptions{CompactionCompression: OverrideCompression(CompressionGZ)}, CompressionGZ, CompressionGZ},
		{FamilyOptions{CompactionCompression: OverrideCompression(CompressionGZ),
			MajorCompactionCompression: OverrideCompression(CompressionZstd)}, CompressionZstd, CompressionGZ},
		{FamilyOptions{Compression: CompressionGZ, MinorCompactionCompression: OverrideCompression(CompressionNone)},
			CompressionGZ, CompressionNone},
	} {
		tc.fo.Name = "f"
		r, err := Open(t.TempDir(), Options{Families: []FamilyOptions{tc.fo}, DisableAutoCompaction: true})
		require.NoError(t, err)
		require.NoError(t, r.Put(NewPut(b("r")).Add(fam, b("q"), b("v"))))
		require.NoError(t, r.Flush())
		require.Equal(t, tc.fo.Compression, codec(r), "flush")
		require.NoError(t, r.Compact(true))
		require.Equal(t, tc.major, codec(r), "major, %+v", tc.fo)
		// A minor compaction of the major output and one more flush.
		require.NoError(t, r.Put(NewPut(b("s")).Add(fam, b("q"), b("v"))))
		require.NoError(t, r.Flush())
		st := r.Store("f")
		st.compactMu.Lock()
		_, _, err = st.compact(r.bgCtx, st.Files(), false, filepath.Join(r.dir, ".tmp"), r.now(), &throttle{})
		st.compactMu.Unlock()
		require.NoError(t, err)
		require.Equal(t, tc.minor, codec(r), "minor, %+v", tc.fo)
		require.Equal(t, "v", string(getValue(t, r, "r", "f", "q")))
		require.NoError(t, r.Close())
	}
}

// TestMinVersionsReadAllocs: the matcher's MIN_VERSIONS path (expired
// versions counted, not skipped) allocates nothing in a GetInto.
func TestMinVersionsReadAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's sync.Pool drops objects")
	}
	r, _, ts := minVersionsRegion(t, 2)
	for i := 0; i < 200; i++ {
		for v := int64(0); v < 4; v++ {
			require.NoError(t, r.Put(NewPut(fmt.Appendf(nil, "row%04d", i)).AddAt(fam, b("q"), ts-v, b("v"))))
		}
	}
	require.NoError(t, r.Flush())
	g := &Get{MaxVersions: 10}
	res := &Result{}
	i := 0
	get := func() {
		g.Row = fmt.Appendf(g.Row[:0], "row%04d", i%200)
		i++
		if _, err := r.GetInto(g, res); err != nil || len(res.Cells) != 2 {
			t.Fatalf("get %q: %v, %v", g.Row, res.Cells, err)
		}
	}
	for j := 0; j < 400; j++ {
		get()
	}
	require.LessOrEqual(t, testing.AllocsPerRun(500, get), 0.0)
}
