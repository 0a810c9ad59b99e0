package region

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/hfile"
	"github.com/stretchr/testify/require"
)

// TestFamilyOptionsZeroValues: a family given by name alone gets HBase's
// defaults, in the options the region reports and in the files it writes.
func TestFamilyOptionsZeroValues(t *testing.T) {
	r := openTest(t, t.TempDir(), func(o *Options) { o.Families = []FamilyOptions{{Name: "f"}} })
	defer r.Close()
	fo := r.Families()[0]
	require.Equal(t, CompressionNone, fo.Compression)
	require.Equal(t, EncodingNone, fo.Encoding)
	require.Equal(t, BloomFilterRow, fo.BloomFilter)
	require.Equal(t, 1, fo.MaxVersions)
	require.Equal(t, hfile.DefaultBlockSize, fo.BlockSize)
	require.NoError(t, r.Put(NewPut(b("r")).Add(fam, b("q"), b("v"))))
	require.NoError(t, r.Flush())
	rd := r.Store("f").Files()[0].Reader
	require.Equal(t, hfile.CompressionNone, rd.Trailer().CompressionCodec)
	require.Equal(t, hfile.BloomRow, rd.BloomType())
}

// TestBloomFilterSpellings: the deprecated Bloom / NoBloom fields still
// decide when set, and every spelling reads back consistently.
func TestBloomFilterSpellings(t *testing.T) {
	for _, tc := range []struct {
		in   FamilyOptions
		want BloomFilter
	}{
		{FamilyOptions{Name: "f"}, BloomFilterRow},
		{FamilyOptions{Name: "f", BloomFilter: BloomFilterNone}, BloomFilterNone},
		{FamilyOptions{Name: "f", BloomFilter: BloomFilterRowCol}, BloomFilterRowCol},
		{FamilyOptions{Name: "f", NoBloom: true}, BloomFilterNone},
		{FamilyOptions{Name: "f", Bloom: hfile.BloomRowCol}, BloomFilterRowCol},
		{FamilyOptions{Name: "f", Bloom: hfile.BloomRow, NoBloom: true}, BloomFilterNone},
	} {
		got := tc.in.withDefaults()
		require.Equal(t, tc.want, got.BloomFilter, "%+v", tc.in)
		require.Equal(t, tc.want.hfileType(), got.Bloom, "%+v", tc.in)
		require.Equal(t, tc.want == BloomFilterNone, got.NoBloom, "%+v", tc.in)
	}
	for _, n := range []string{"ROW", "row", "NONE", "ROWCOL"} {
		bf, err := ParseBloomFilter(n)
		require.NoError(t, err)
		require.Equal(t, bytes.ToUpper([]byte(n)), []byte(bf.String()))
	}
	_, err := ParseBloomFilter("ROWPREFIX_FIXED_LENGTH")
	require.True(t, errors.Is(err, ErrInvalidArgument), "%v", err)
	err = FamilyOptions{Name: "f", BloomFilter: 9}.withDefaults().validate()
	require.True(t, errors.Is(err, ErrInvalidArgument), "%v", err)
	err = FamilyOptions{Name: "f", Compression: hfile.CompressionLZO}.withDefaults().validate()
	require.True(t, errors.Is(err, ErrInvalidArgument), "LZO is refused, not rewritten: %v", err)
}

// TestRegionInfoFirstFormat: a .regioninfo written by the first format
// (FamilyOptions marshalled as they were, compression as HBase's ordinal)
// opens with the same options, and is rewritten readable both ways.
func TestRegionInfoFirstFormat(t *testing.T) {
	dir := t.TempDir()
	old := `{
  "table": "t",
  "families": [
    {"Name": "a", "MaxVersions": 3, "TTL": 0, "Encoding": 4, "Compression": 3, "Bloom": 1, "NoBloom": false, "BlockSize": 65536, "InMemory": true},
    {"Name": "b", "MaxVersions": 1, "TTL": 60000000000, "Encoding": 0, "Compression": 2, "Bloom": 0, "NoBloom": true, "BlockSize": 4096, "InMemory": false},
    {"Name": "c", "MaxVersions": 1, "TTL": 0, "Encoding": 0, "Compression": 6, "Bloom": 2, "NoBloom": false, "BlockSize": 4096, "InMemory": false}
  ]
}`
	require.NoError(t, os.WriteFile(filepath.Join(dir, descriptorFile), []byte(old), 0o644))
	check := func() {
		r, err := Open(dir, Options{Table: "t"})
		require.NoError(t, err)
		defer r.Close()
		fams := r.Families()
		require.Len(t, fams, 3)
		require.Equal(t, "a", fams[0].Name)
		require.Equal(t, 3, fams[0].MaxVersions)
		require.Equal(t, EncodingFastDiff, fams[0].Encoding)
		require.Equal(t, CompressionSnappy, fams[0].Compression)
		require.Equal(t, BloomFilterRow, fams[0].BloomFilter)
		require.Equal(t, 65536, fams[0].BlockSize)
		require.True(t, fams[0].InMemory)
		require.Equal(t, CompressionNone, fams[1].Compression)
		require.Equal(t, BloomFilterNone, fams[1].BloomFilter)
		require.Equal(t, int64(60), int64(fams[1].TTL.Seconds()))
		require.Equal(t, CompressionZstd, fams[2].Compression)
		require.Equal(t, BloomFilterRowCol, fams[2].BloomFilter)
	}
	check()
	check() // as rewritten by the first open
}

// TestOwnCache: a region given CacheSize makes its own cache, reports its
// counters in Stats and closes it with itself.
func TestOwnCache(t *testing.T) {
	r := openTest(t, t.TempDir(), func(o *Options) { o.CacheSize = 8 << 20; o.DisableAutoCompaction = true })
	for i := 0; i < 300; i++ {
		require.NoError(t, r.Put(NewPut(b(fmt.Sprintf("r%03d", i))).Add(fam, b("q"), make([]byte, 100))))
	}
	require.NoError(t, r.Flush())
	read := func() {
		for i := 0; i < 300; i++ {
			res, err := r.Get(NewGet(b(fmt.Sprintf("r%03d", i))))
			require.NoError(t, err)
			require.Len(t, res.Cells, 1)
		}
	}
	read()
	first := r.Stats().BlockCache
	read()
	second := r.Stats().BlockCache
	require.Greater(t, first.Count, int64(0), "blocks are cached")
	require.Greater(t, second.HitCount-first.HitCount, int64(300))
	require.Equal(t, first.MissCount, second.MissCount)
	require.Equal(t, int64(8<<20), second.MaxSize)
	own := r.ownCache
	require.NotNil(t, own)
	require.NoError(t, r.Close())
	require.True(t, own.isClosed.Load(), "the region closes the cache it made")

	none := openTest(t, t.TempDir(), nil)
	defer none.Close()
	require.Nil(t, none.cache, "no CacheSize, no cache")
	require.Zero(t, none.Stats().BlockCache.MaxSize)
}

// TestSharedCache: one Cache serves two regions; closing a region leaves it
// open for the other, and Stats of each counts both.
func TestSharedCache(t *testing.T) {
	c, err := NewCache(8 << 20)
	require.NoError(t, err)
	defer c.Close()
	r1 := openTest(t, t.TempDir(), func(o *Options) { o.Cache = c })
	r2 := openTest(t, t.TempDir(), func(o *Options) { o.Cache = c })
	defer r2.Close()
	for _, r := range []*Region{r1, r2} {
		require.NoError(t, r.Put(NewPut(b("row")).Add(fam, b("q"), b("v"))))
		require.NoError(t, r.Flush())
		for i := 0; i < 2; i++ {
			_, err := r.Get(NewGet(b("row")))
			require.NoError(t, err)
		}
	}
	require.NoError(t, r1.Close())
	require.False(t, c.isClosed.Load(), "a shared cache outlives the regions")
	st := r2.Stats().BlockCache
	require.Equal(t, c.Stats().HitCount, st.HitCount)
	require.Greater(t, st.HitCount, int64(0))
	res, err := r2.Get(NewGet(b("row")))
	require.NoError(t, err)
	require.Equal(t, b("v"), res.Value(fam, b("q")))
}

// recordingHandler keeps the messages logged through it.
type recordingHandler struct {
	mu   sync.Mutex
	msgs []string
}

func (h *recordingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *recordingHandler) Handle(_ context.Context, rec slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.msgs = append(h.msgs, rec.Message)
	return nil
}
func (h *recordingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *recordingHandler) WithGroup(string) slog.Handler      { return h }

func (h *recordingHandler) has(msg string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, m := range h.msgs {
		if m == msg {
			return true
		}
	}
	return false
}

// TestLoggerOption: the region logs through Options.Logger, not the
// process-wide default.
func TestLoggerOption(t *testing.T) {
	var mine, global recordingHandler
	prev := slog.Default()
	slog.SetDefault(slog.New(&global))
	defer slog.SetDefault(prev)
	r := openTest(t, t.TempDir(), func(o *Options) { o.Logger = slog.New(&mine); o.DisableAutoCompaction = true })
	defer r.Close()
	for i := 0; i < 2; i++ {
		require.NoError(t, r.Put(NewPut(b("row")).AddAt(fam, b("q"), int64(i+1), b("v"))))
		require.NoError(t, r.Flush())
	}
	require.NoError(t, r.Compact(true))
	require.True(t, mine.has("region: compacted"), "got %q", mine.msgs)
	require.False(t, global.has("region: compacted"), "the default logger got %q", global.msgs)
}

// TestBloomErrorRate: the option reaches the files' bloom filters: a lower
// false positive rate takes more bits.
func TestBloomErrorRate(t *testing.T) {
	size := func(rate float64) int64 {
		r := openTest(t, t.TempDir(), func(o *Options) { o.BloomErrorRate = rate })
		defer r.Close()
		for i := 0; i < 5000; i++ {
			require.NoError(t, r.Put(NewPut(b(fmt.Sprintf("row%05d", i))).Add(fam, b("q"), b("v"))))
		}
		require.NoError(t, r.Flush())
		return r.Store("f").Files()[0].Size()
	}
	loose, tight := size(0.1), size(0.0001)
	// 5000 keys: ~4.8 bits/key at 10%, ~19 at 0.01%: about 9 KB apart.
	require.Greater(t, tight-loose, int64(6000), "0.01%%: %d bytes, 10%%: %d bytes", tight, loose)
}

// TestInvalidArgumentMark: requests that cannot succeed carry
// ErrInvalidArgument; others do not.
func TestInvalidArgumentMark(t *testing.T) {
	r := openTest(t, t.TempDir(), nil)
	defer r.Close()
	require.NoError(t, r.Put(NewPut(b("r")).Add(fam, b("short"), b("abc"))))
	for name, err := range map[string]error{
		"empty row":          r.Put(NewPut(nil).Add(fam, b("q"), b("v"))),
		"negative timestamp": r.Put(NewPut(b("r")).AddAt(fam, b("q"), -5, b("v"))),
		"increment of 3 bytes": func() error {
			_, err := r.Increment(NewIncrement(b("r")).Add(fam, b("short"), 1))
			return err
		}(),
		"get of empty row": func() error { _, err := r.Get(NewGet(nil)); return err }(),
	} {
		require.Error(t, err, name)
		require.True(t, errors.Is(err, ErrInvalidArgument), "%s: %v", name, err)
	}
	err := r.Put(NewPut(b("r")).Add(b("nope"), b("q"), b("v")))
	require.True(t, errors.Is(err, ErrNoSuchFamily), "%v", err)
	require.False(t, errors.Is(err, ErrInvalidArgument))
}

// TestCompactStoresReports: CompactStores says what it compacted, and
// nothing when there is nothing to do.
func TestCompactStoresReports(t *testing.T) {
	r := openTest(t, t.TempDir(), func(o *Options) { o.DisableAutoCompaction = true })
	defer r.Close()
	for i := 0; i < 3; i++ {
		require.NoError(t, r.Put(NewPut(b("row")).AddAt(fam, b("q"), int64(i+1), b("v"))))
		require.NoError(t, r.Flush())
	}
	res, err := r.CompactStores(true)
	require.NoError(t, err)
	require.Len(t, res, 1)
	require.Equal(t, "f", res[0].Family)
	require.True(t, res[0].Major)
	require.Equal(t, 3, res[0].InputFiles)
	require.Greater(t, res[0].InputBytes, res[0].OutputBytes)
	require.Greater(t, res[0].OutputBytes, int64(0))
	res, err = r.CompactStores(true)
	require.NoError(t, err)
	require.Empty(t, res, "one major-compacted file: nothing to do")
}

// TestMajorCompactWaitsForBackground: a major compaction asked for while
// minor ones run does its work anyway: it leaves one major-compacted file.
func TestMajorCompactWaitsForBackground(t *testing.T) {
	r := openTest(t, t.TempDir(), func(o *Options) { o.DisableAutoCompaction = true; o.CompactionMin = 2 })
	defer r.Close()
	for round := 0; round < 5; round++ {
		for i := 0; i < 6; i++ {
			for j := 0; j < 50; j++ {
				require.NoError(t, r.Put(NewPut(b(fmt.Sprintf("r%02d-%03d", i, j))).AddAt(fam, b("q"), int64(round*10+i+1), make([]byte, 50))))
			}
			require.NoError(t, r.Flush())
		}
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = r.Compact(false)
		}()
		require.NoError(t, r.Compact(true))
		wg.Wait()
		// Whichever ran first, the minor one finds one file after the
		// major one, and the major one waits for and takes the minor's.
		files := r.Store("f").Files()
		require.Len(t, files, 1)
		require.True(t, files[0].Major)
	}
}
