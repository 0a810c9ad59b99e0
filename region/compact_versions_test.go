package region

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/regionkv/regionkv/hfile"
	"github.com/regionkv/regionkv/internal/vfs"
	"github.com/stretchr/testify/require"
)

// minorRegion opens a region (families f, VERSIONS 3, and g, VERSIONS 1)
// that compacts only when asked, with the exploring policy's ratio applying
// to files of any size.
func minorRegion(t *testing.T) *Region {
	t.Helper()
	r := openTest(t, t.TempDir(), func(o *Options) { o.DisableAutoCompaction = true; o.CompactionMinSize = 1 })
	t.Cleanup(func() { r.Close() })
	return r
}

// putBig writes n rows prefix0000.. of fam:q at timestamp 1, which make a
// file the exploring policy leaves out of a minor compaction of the small
// files around it (values that do not compress).
func putBig(t *testing.T, r *Region, fam, prefix string, n int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(uint64(n), 1))
	v := make([]byte, 100)
	for i := 0; i < n; i++ {
		for j := range v {
			v[j] = byte(rng.Uint32())
		}
		require.NoError(t, r.Put(NewPut(b(fmt.Sprintf("%s%04d", prefix, i))).AddAt(b(fam), b("q"), 1, v)))
	}
}

// overwrite writes rows r00..r19 of fam:q at ts, value v<ts>.
func overwrite(t *testing.T, r *Region, fam string, ts int64) {
	t.Helper()
	for i := 0; i < 20; i++ {
		require.NoError(t, r.Put(NewPut(b(fmt.Sprintf("r%02d", i))).AddAt(b(fam), b("q"), ts, b(fmt.Sprint("v", ts)))))
	}
}

// versionsOf returns the timestamps a Get of every version of row's fam:q
// returns, newest first.
func versionsOf(t *testing.T, r *Region, row, fam string) []int64 {
	t.Helper()
	res, err := r.Get((&Get{Row: b(row), MaxVersions: 10}).AddFamily(b(fam)))
	require.NoError(t, err)
	var out []int64
	for _, c := range res.Cells {
		out = append(out, c.Timestamp)
	}
	return out
}

// TestMinorCompactionDropsHiddenVersions: a minor compaction whose inputs
// no other file can contradict drops what its inputs alone hide (versions
// beyond VERSIONS, puts their markers mask) and keeps the markers; reads
// see the same, but for versions a time range would have dug up, gone as
// they are after a flush (HBase's behaviour).
func TestMinorCompactionDropsHiddenVersions(t *testing.T) {
	r := minorRegion(t)
	putBig(t, r, "f", "s", 2000)
	require.NoError(t, r.Flush())
	for ts := int64(10); ts <= 14; ts++ {
		overwrite(t, r, "f", ts)
		if ts == 12 {
			// Markers of every kind, some masking puts in older files,
			// some puts yet to come (HBase masks by timestamp).
			require.NoError(t, r.Delete(NewDelete(b("r01")).AddColumns(b("f"), b("q"), 12)))
			require.NoError(t, r.Delete(NewDelete(b("r02")).AddColumn(b("f"), b("q"), 13)))
			require.NoError(t, r.Delete(NewDelete(b("r03")).AddFamily(b("f"), 11)))
			require.NoError(t, r.Delete(NewDelete(b("r04")).AddFamilyVersion(b("f"), 14)))
		}
		require.NoError(t, r.Flush())
	}
	require.Len(t, r.Store("f").Files(), 6)
	before := snapshotRows(t, r)
	require.Equal(t, []int64{14, 12, 11}, versionsOf(t, r, "r02", "f"))
	require.Equal(t, []int64{13, 12, 11}, versionsOf(t, r, "r04", "f"))
	res, err := r.Get(inRangeFam("r00", "f", 0, 12))
	require.NoError(t, err)
	require.Len(t, res.Cells, 1, "before: a time range finds version 11")

	done, err := r.CompactStores(false)
	require.NoError(t, err)
	require.Len(t, done, 1)
	require.False(t, done[0].Major)
	require.Equal(t, 5, done[0].InputFiles)
	files := r.Store("f").Files()
	require.Len(t, files, 2)
	require.Equal(t, before, snapshotRows(t, r))
	cells, dels := countFileCells(t, r, "f")
	// 16 rows keep 3 versions; r01 keeps 14 and 13 and r02, r03 and r04
	// three each, unmasked; the 4 markers stay; and the big file.
	require.Equal(t, 16*3+2+3*3+4+2000, cells)
	require.Equal(t, 4, dels)
	n, ok := files[1].Reader.FileInfo().Int64(fileInfoVersionDeletes)
	require.True(t, ok)
	require.Equal(t, int64(2), n, "r02's Delete and r04's DeleteFamilyVersion")
	res, err = r.Get(inRangeFam("r00", "f", 0, 12))
	require.NoError(t, err)
	require.Empty(t, res.Cells, "after: version 11 is gone")

	// The markers still mask what the big file or later writes hold.
	require.NoError(t, r.Put(NewPut(b("r04")).AddAt(b("f"), b("q"), 14, b("again"))))
	require.Equal(t, []int64{13, 12, 11}, versionsOf(t, r, "r04", "f"))
	require.NoError(t, r.Flush())
	require.NoError(t, r.Compact(true))
	require.Equal(t, before, snapshotRows(t, r))
}

func inRangeFam(row, fam string, lo, hi int64) *Get {
	g := inRange(row, lo, hi)
	g.AddFamily(b(fam))
	return g
}

// TestMinorCompactionKeepsVersionsAnotherFileCouldShow: a version delete
// marker in a file outside the compaction, older or newer, masks the newest
// version of a column and shows the next; a minor compaction then keeps
// every version, and, its output being mostly surplus, asks for a major
// compaction, which sees the marker.
func TestMinorCompactionKeepsVersionsAnotherFileCouldShow(t *testing.T) {
	for _, where := range []string{"older", "newer"} {
		t.Run(where, func(t *testing.T) {
			r := minorRegion(t)
			marker := func() {
				putBig(t, r, "g", "s"+where, 2000)
				require.NoError(t, r.Delete(NewDelete(b("r00")).AddColumn(b("g"), b("q"), 13)))
				require.NoError(t, r.Flush())
			}
			if where == "older" {
				marker()
			}
			for ts := int64(10); ts <= 13; ts++ {
				overwrite(t, r, "g", ts)
				require.NoError(t, r.Flush())
			}
			if where == "newer" {
				putBig(t, r, "g", "t", 2000) // the big file first: the marker's must be newer still
				require.NoError(t, r.Flush())
				require.NoError(t, r.Compact(true))
				for ts := int64(14); ts <= 17; ts++ {
					overwrite(t, r, "g", ts)
					require.NoError(t, r.Flush())
				}
				// r00 at 17 is now the newest; mask it from a newer file.
				putBig(t, r, "g", "u", 3000)
				require.NoError(t, r.Delete(NewDelete(b("r00")).AddColumn(b("g"), b("q"), 17)))
				require.NoError(t, r.Flush())
			}
			before := snapshotRows(t, r)
			want := int64(12)
			if where == "newer" {
				want = 16
			}
			require.Equal(t, []int64{want}, versionsOf(t, r, "r00", "g"), "the marker shows the next version")
			cellsBefore, _ := countFileCells(t, r, "g")

			done, err := r.CompactStores(false)
			require.NoError(t, err)
			require.Len(t, done, 1)
			require.False(t, done[0].Major)
			require.Equal(t, 4, done[0].InputFiles)
			require.Equal(t, before, snapshotRows(t, r))
			require.Equal(t, []int64{want}, versionsOf(t, r, "r00", "g"))
			cells, _ := countFileCells(t, r, "g")
			require.Equal(t, cellsBefore, cells, "every version kept")
			require.True(t, r.Store("g").majorWanted.Load(), "3 of every 4 puts are surplus")

			require.NoError(t, r.Compact(true))
			require.Equal(t, before, snapshotRows(t, r))
			require.False(t, r.Store("g").majorWanted.Load())
		})
	}
}

// TestMinorCompactionBulkLoadedFileMayHoldVersionDeletes: a file without
// our count of version deletes (here a bulk load's) may hold some, so a
// minor compaction beside it keeps every version.
func TestMinorCompactionBulkLoadedFileMayHoldVersionDeletes(t *testing.T) {
	r := minorRegion(t)
	src := filepath.Join(t.TempDir(), "g", "big")
	writeTestHFile(t, vfs.Default, src, "g", blRows(0, 1000, "big-", 1), hfile.WriterOptions{})
	_, err := r.BulkLoadHFiles(context.Background(), []BulkLoadFile{{Family: "g", Path: src}}, BulkLoadOptions{})
	require.NoError(t, err)
	for ts := int64(10); ts <= 13; ts++ {
		overwrite(t, r, "g", ts)
		require.NoError(t, r.Flush())
	}
	require.True(t, mayHoldVersionDeletes(r.Store("g").Files()[0]))
	require.False(t, mayHoldVersionDeletes(r.Store("g").Files()[1]), "a flush counts them: none")
	done, err := r.CompactStores(false)
	require.NoError(t, err)
	require.Len(t, done, 1)
	require.Equal(t, 4, done[0].InputFiles)
	cells, _ := countFileCells(t, r, "g")
	require.Equal(t, 1000+4*20, cells)
}

// TestMinorCompactionKeepsOldReadPoint: scanners opened before rows were
// overwritten keep returning the old values after a minor compaction has
// dropped them from the store's files, forward and reversed, and new reads
// see the new ones.
func TestMinorCompactionKeepsOldReadPoint(t *testing.T) {
	r := minorRegion(t)
	putBig(t, r, "g", "s", 2000)
	require.NoError(t, r.Flush())
	overwrite(t, r, "g", 10)
	require.NoError(t, r.Flush())
	overwrite(t, r, "g", 11) // in the memstore when the scanners open
	var scanners []*Scanner
	for _, reversed := range []bool{false, true} {
		sc, err := r.NewScanner(&Scan{Reversed: reversed, Columns: []Column{{Family: b("g")}}})
		require.NoError(t, err)
		defer sc.Close()
		scanners = append(scanners, sc)
	}
	require.NoError(t, r.Flush())
	overwrite(t, r, "g", 12)
	require.NoError(t, r.Flush())
	overwrite(t, r, "g", 13)
	require.NoError(t, r.Flush())
	done, err := r.CompactStores(false)
	require.NoError(t, err)
	require.Len(t, done, 1)
	require.Equal(t, 4, done[0].InputFiles)
	cells, _ := countFileCells(t, r, "g")
	require.Equal(t, 2000+20, cells, "one version of each overwritten row left")
	require.Equal(t, []int64{13}, versionsOf(t, r, "r05", "g"))

	for _, sc := range scanners {
		rows := 0
		for {
			res, err := sc.Next()
			require.NoError(t, err)
			if res == nil {
				break
			}
			rows++
			require.Len(t, res.Cells, 1)
			if c := res.Cells[0]; c.Row[0] == 'r' {
				require.Equal(t, "v11", string(c.Value), "row %s", c.Row)
			}
		}
		require.Equal(t, 2020, rows)
	}
}
