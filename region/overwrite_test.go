package region

import (
	"fmt"
	"testing"
	"time"

	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/hfile"
	"github.com/stretchr/testify/require"
)

func TestKeySampler(t *testing.T) {
	require.Nil(t, newKeySampler(hfile.BloomNone).result())
	for _, n := range []int{1, 100, overwriteSampleSize * 2, 10_000} {
		k := newKeySampler(hfile.BloomRow)
		for i := 0; i < n; i++ {
			for q := 0; q < 3; q++ { // one key per row, whatever its columns
				k.add(&encoding.KeyValue{Row: b(fmt.Sprintf("r%05d", i)), Qualifier: b(fmt.Sprint(q))})
			}
		}
		s := k.result()
		require.NotNil(t, s)
		if n >= overwriteSampleSize {
			require.GreaterOrEqual(t, len(s.keys), overwriteSampleSize, "n=%d", n)
			require.Less(t, len(s.keys), 2*overwriteSampleSize, "n=%d", n)
		} else {
			require.Len(t, s.keys, n)
		}
		// Evenly spaced, from the first key on.
		stride := n / len(s.keys)
		for i, key := range s.keys {
			if n >= overwriteSampleSize {
				require.Equal(t, fmt.Sprintf("r%05d", i*k.stride), string(key.row))
			} else {
				require.Equal(t, fmt.Sprintf("r%05d", i*stride), string(key.row))
			}
			require.Nil(t, key.qualifier)
		}
	}
	k := newKeySampler(hfile.BloomRowCol)
	for q := 0; q < 3; q++ {
		k.add(&encoding.KeyValue{Row: b("r"), Qualifier: b(fmt.Sprint(q))})
		k.add(&encoding.KeyValue{Row: b("r"), Qualifier: b(fmt.Sprint(q)), Timestamp: 1})
	}
	require.Equal(t, []sampleKey{{b("r"), b("0")}, {b("r"), b("1")}, {b("r"), b("2")}}, k.result().keys)
}

// overwriteRegion is a region whose family o has rows of 200-byte values
// and the given VERSIONS, compacting only when asked.
func overwriteRegion(t *testing.T, versions int, bloom BloomFilter) *Region {
	t.Helper()
	r, err := Open(t.TempDir(), Options{
		Families:              []FamilyOptions{{Name: "o", MaxVersions: versions, BloomFilter: bloom}},
		DisableAutoCompaction: true,
	})
	require.NoError(t, err)
	t.Cleanup(func() { r.Close() })
	return r
}

// writeRows writes rows [from, to) of o:q (and o:p with two columns) at
// ts, then flushes.
func writeRows(t *testing.T, r *Region, from, to int, ts int64, columns int) {
	t.Helper()
	v := make([]byte, 200)
	for i := from; i < to; i++ {
		p := NewPut(b(fmt.Sprintf("row%05d", i)))
		for c := 0; c < columns; c++ {
			v[0], v[1] = byte(i), byte(ts)
			p.AddAt(b("o"), b(fmt.Sprint("q", c)), ts, v)
		}
		require.NoError(t, r.Put(p))
	}
	require.NoError(t, r.Flush())
}

// TestSupersededShare checks the estimate of how much of a store newer
// files rewrite.
func TestSupersededShare(t *testing.T) {
	share := func(r *Region) float64 {
		t.Helper()
		s := r.Store("o")
		dead, total, err := s.supersededShare(s.Files(), s.options().MaxVersions)
		require.NoError(t, err)
		return float64(dead) / float64(total)
	}
	t.Run("rewritten", func(t *testing.T) {
		r := overwriteRegion(t, 1, BloomFilterRow)
		writeRows(t, r, 0, 2000, 1, 1)
		writeRows(t, r, 0, 2000, 2, 1)
		require.InDelta(t, 0.5, share(r), 0.03, "the older of two equal files")
		ok, err := r.Store("o").mostlyOverwritten()
		require.NoError(t, err)
		require.True(t, ok)
	})
	t.Run("new rows", func(t *testing.T) {
		r := overwriteRegion(t, 1, BloomFilterRow)
		writeRows(t, r, 0, 2000, 1, 1)
		writeRows(t, r, 2000, 4000, 1, 1)
		require.Less(t, share(r), 0.03, "only the bloom's false positives")
		ok, err := r.Store("o").mostlyOverwritten()
		require.NoError(t, err)
		require.False(t, ok)
	})
	t.Run("a fifth rewritten", func(t *testing.T) {
		r := overwriteRegion(t, 1, BloomFilterRow)
		writeRows(t, r, 0, 2000, 1, 1)
		writeRows(t, r, 0, 400, 2, 1)
		// 400 of the older file's 2000 rows: a sixth of both files' bytes.
		require.InDelta(t, 400.0/2400, share(r), 0.03)
	})
	t.Run("VERSIONS 2", func(t *testing.T) {
		r := overwriteRegion(t, 2, BloomFilterRow)
		writeRows(t, r, 0, 2000, 1, 1)
		writeRows(t, r, 0, 2000, 2, 1)
		require.InDelta(t, 0.25, share(r), 0.03, "a version dies when two newer exist")
		writeRows(t, r, 0, 2000, 3, 1)
		require.InDelta(t, (1+0.5)/3, share(r), 0.03)
	})
	t.Run("one column of two rewritten", func(t *testing.T) {
		r := overwriteRegion(t, 1, BloomFilterRow)
		writeRows(t, r, 0, 2000, 1, 2)
		writeRows(t, r, 0, 2000, 2, 1)
		// A ROW bloom cannot tell the columns apart, but the newer file's
		// bytes bound what it can rewrite: about half the older file.
		require.InDelta(t, 1.0/3, share(r), 0.05)
	})
	t.Run("ROWCOL", func(t *testing.T) {
		r := overwriteRegion(t, 1, BloomFilterRowCol)
		writeRows(t, r, 0, 2000, 1, 1)
		writeRows(t, r, 0, 2000, 2, 1)
		require.InDelta(t, 0.5, share(r), 0.03)
	})
	t.Run("no bloom", func(t *testing.T) {
		r := overwriteRegion(t, 1, BloomFilterNone)
		writeRows(t, r, 0, 2000, 1, 1)
		writeRows(t, r, 0, 2000, 2, 1)
		require.Zero(t, share(r), "nothing to estimate with")
	})
	t.Run("reopened", func(t *testing.T) {
		r := overwriteRegion(t, 1, BloomFilterRow)
		writeRows(t, r, 0, 2000, 1, 1)
		writeRows(t, r, 0, 2000, 2, 1)
		dir := r.Dir()
		require.NoError(t, r.Close())
		r2, err := Open(dir, Options{Families: []FamilyOptions{{Name: "o"}}, DisableAutoCompaction: true})
		require.NoError(t, err)
		defer r2.Close()
		require.Zero(t, share(r2), "files opened from disk have no sample")
		writeRows(t, r2, 0, 2000, 3, 1)
		require.InDelta(t, 2.0/3, share(r2), 0.03, "a new flush rewrites both older files")
	})
}

// TestCompactNeededCompactsOverwrittenStore: two files that rewrite each
// other are compacted whole, though fewer than CompactionMin; two that do
// not are left alone.
func TestCompactNeededCompactsOverwrittenStore(t *testing.T) {
	r := overwriteRegion(t, 1, BloomFilterRow)
	writeRows(t, r, 0, 2000, 1, 1)
	writeRows(t, r, 2000, 4000, 1, 1)
	done, err := r.CompactNeeded()
	require.NoError(t, err)
	require.Empty(t, done)
	require.Len(t, r.Store("o").Files(), 2)

	writeRows(t, r, 0, 4000, 2, 1)
	done, err = r.CompactNeeded()
	require.NoError(t, err)
	require.Len(t, done, 1)
	require.True(t, done[0].Major)
	require.Equal(t, 3, done[0].InputFiles)
	require.Len(t, r.Store("o").Files(), 1)
	cells, _ := countFileCells(t, r, "o")
	require.Equal(t, 4000, cells)
	require.Equal(t, byte(2), getValue(t, r, "row00007", "o", "q0")[1])

	// New rows: not overwritten, but CompactionMin files, which the
	// exploring policy compacts (all of them, small as they are: a major
	// compaction).
	writeRows(t, r, 10_000, 10_100, 1, 1)
	done, err = r.CompactNeeded()
	require.NoError(t, err)
	require.Empty(t, done)
	writeRows(t, r, 10_100, 10_200, 1, 1)
	done, err = r.CompactNeeded()
	require.NoError(t, err)
	require.Len(t, done, 1)
	require.Equal(t, 3, done[0].InputFiles)
}

// TestCompactorCompactsOverwrittenStore: the background compactor compacts
// a store whose newest flush rewrote it, with two files.
func TestCompactorCompactsOverwrittenStore(t *testing.T) {
	r, err := Open(t.TempDir(), Options{Families: []FamilyOptions{{Name: "o"}}})
	require.NoError(t, err)
	defer r.Close()
	writeRows(t, r, 0, 2000, 1, 1)
	writeRows(t, r, 0, 2000, 2, 1)
	require.Eventually(t, func() bool { return r.Stats().MajorCompactions == 1 }, 20*time.Second, 10*time.Millisecond)
	require.Len(t, r.Store("o").Files(), 1)
	require.Equal(t, byte(2), getValue(t, r, "row01999", "o", "q0")[1])
}
