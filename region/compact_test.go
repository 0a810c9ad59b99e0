package region

import (
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/regionkv/regionkv/encoding"
	"github.com/stretchr/testify/require"
)

func TestSelectMinor(t *testing.T) {
	mk := func(sizes ...int64) []int64 { return sizes }
	pick := func(s []int64, minFiles, maxFiles int, ratio float64, minSize, maxSize int64) []int64 {
		start, end := selectMinor(s, minFiles, maxFiles, ratio, minSize, maxSize)
		if end == 0 {
			return nil
		}
		return s[start:end]
	}
	const big = 1 << 40
	// The reference guide's example: with ratio 1.0 neither 100 nor 50 fits
	// (50 > 23+12+12). With 1.2 everything does (100 <= 1.2 × 97).
	require.Equal(t, []int64{23, 12, 12}, pick(mk(100, 50, 23, 12, 12), 3, 10, 1.0, 10, big))
	require.Equal(t, []int64{100, 50, 23, 12, 12}, pick(mk(100, 50, 23, 12, 12), 3, 10, 1.2, 10, big))
	// Too few files.
	require.Nil(t, pick(mk(10, 10), 3, 10, 1.2, 1, big))
	// Max files caps the run; the smallest total wins among equals.
	require.Equal(t, []int64{5, 5, 5}, pick(mk(9, 9, 9, 5, 5, 5), 3, 3, 1.2, 1, big))
	// Small runs skip the ratio test.
	require.Equal(t, []int64{1000, 1, 1}, pick(mk(1000, 1, 1), 3, 10, 1.2, 2000, big))
	// Max size excludes runs.
	require.Nil(t, pick(mk(10, 10, 10), 3, 10, 1.2, 1, 25))
}

func countFileCells(t *testing.T, r *Region, fam string) (cells, deletes int) {
	for _, f := range r.Store(fam).Files() {
		it := f.Reader.NewIterator(false)
		var kv encoding.KeyValue
		for ok, err := it.First(); ok || err != nil; ok, err = it.Next() {
			require.NoError(t, err)
			it.KeyValue(&kv)
			cells++
			if kv.Type.IsDelete() {
				deletes++
			}
		}
	}
	return cells, deletes
}

func snapshotRows(t *testing.T, r *Region) map[string]string {
	out := map[string]string{}
	sc, err := r.NewScanner(&Scan{MaxVersions: 10})
	require.NoError(t, err)
	defer sc.Close()
	for {
		res, err := sc.Next()
		require.NoError(t, err)
		if res == nil {
			return out
		}
		for _, c := range res.Cells {
			out[fmt.Sprintf("%s/%s:%s/%d", c.Row, c.Family, c.Qualifier, c.Timestamp)] = string(c.Value)
		}
	}
}

func TestCompactionMinorAndMajor(t *testing.T) {
	// The ratio test applies to files of any size.
	r := openTest(t, t.TempDir(), func(o *Options) { o.DisableAutoCompaction = true; o.CompactionMinSize = 1 })
	defer r.Close()
	for round := 0; round < 5; round++ {
		for i := 0; i < 40; i++ {
			row := b(fmt.Sprintf("r%02d", i))
			require.NoError(t, r.Put(NewPut(row).AddAt(fam, b("q"), int64(10+round), b(fmt.Sprint("v", round)))))
		}
		if round == 0 {
			// A big first file, which the exploring policy leaves out of
			// the minor compaction: one of every file would be major.
			for i := 0; i < 1000; i++ {
				require.NoError(t, r.Put(NewPut(b(fmt.Sprintf("s%04d", i))).AddAt(fam, b("q"), 1, b("big"))))
			}
		}
		if round == 3 {
			require.NoError(t, r.Delete(NewDelete(b("r05")).AddColumns(fam, b("q"), 100)))
			require.NoError(t, r.Delete(NewDelete(b("r06")).AddColumn(fam, b("q"), 13)))
		}
		require.NoError(t, r.Flush())
	}
	require.Len(t, r.Store("f").Files(), 5)
	before := snapshotRows(t, r)

	require.NoError(t, r.Compact(false))
	require.Len(t, r.Store("f").Files(), 2, "the big file and the minor compaction's output")
	require.Equal(t, before, snapshotRows(t, r))
	_, dels := countFileCells(t, r, "f")
	require.Equal(t, 2, dels, "a minor compaction keeps delete markers")
	require.Zero(t, r.Stats().MajorCompactions)

	require.NoError(t, r.Compact(true))
	require.Len(t, r.Store("f").Files(), 1)
	require.True(t, r.Store("f").Files()[0].Major)
	require.Equal(t, before, snapshotRows(t, r))
	cells, dels := countFileCells(t, r, "f")
	require.Zero(t, dels, "a major compaction drops delete markers")
	// 40 rows × 3 versions kept (VERSIONS=3), minus r05 (all deleted), and r06
	// lost its ts-13 version, so the next-older one takes its place; and the
	// big file's rows.
	require.Equal(t, 39*3+1000, cells)
	require.Equal(t, int64(2), r.Stats().Compactions)
	ents, err := os.ReadDir(filepath.Join(r.Dir(), "f"))
	require.NoError(t, err)
	require.Len(t, ents, 1, "compacted files are removed from disk")
}

// TestMinorCompactionOfEveryFileIsMajor checks that a minor compaction that
// picks every file drops what a major one drops, surplus versions above
// all (what keeps an overwritten table small), and that a minor compaction
// whose output is mostly surplus versions asks for a major one.
func TestMinorCompactionOfEveryFileIsMajor(t *testing.T) {
	r := openTest(t, t.TempDir(), func(o *Options) { o.DisableAutoCompaction = true; o.CompactionMinSize = 1 })
	defer r.Close()
	for round := 0; round < 4; round++ {
		for i := 0; i < 50; i++ {
			require.NoError(t, r.Put(NewPut(b(fmt.Sprintf("r%02d", i))).AddAt(b("g"), b("q"), int64(10+round), b(fmt.Sprint("v", round)))))
		}
		require.NoError(t, r.Flush())
	}
	before := snapshotRows(t, r)
	require.NoError(t, r.Compact(false))
	files := r.Store("g").Files()
	require.Len(t, files, 1)
	require.True(t, files[0].Major)
	require.Equal(t, int64(1), r.Stats().MajorCompactions)
	require.Equal(t, before, snapshotRows(t, r))
	cells, _ := countFileCells(t, r, "g")
	require.Equal(t, 50, cells, "VERSIONS=1: one version per row is left")

	// A big file the policy leaves out, then overwrites: the minor
	// compaction of the overwrites drops the versions they hide (the big
	// file holds no version delete that could show them again).
	for i := 0; i < 2000; i++ {
		require.NoError(t, r.Put(NewPut(b(fmt.Sprintf("s%04d", i))).AddAt(b("g"), b("q"), 1, b("big"))))
	}
	require.NoError(t, r.Flush())
	require.NoError(t, r.Compact(true))
	for round := 0; round < 3; round++ {
		for i := 0; i < 50; i++ {
			require.NoError(t, r.Put(NewPut(b(fmt.Sprintf("r%02d", i))).AddAt(b("g"), b("q"), int64(20+round), b(fmt.Sprint("w", round)))))
		}
		require.NoError(t, r.Flush())
	}
	before = snapshotRows(t, r)
	require.NoError(t, r.Compact(false))
	files = r.Store("g").Files()
	require.Len(t, files, 2)
	require.False(t, files[1].Major)
	require.Equal(t, before, snapshotRows(t, r))
	cells, _ = countFileCells(t, r, "g")
	require.Equal(t, 2000+50+50, cells, "the big file, and one version of each overwritten row")
	require.False(t, r.Store("g").majorWanted.Load())
}

func TestCompactionKeepsOpenScannersWorking(t *testing.T) {
	r := openTest(t, t.TempDir(), func(o *Options) { o.DisableAutoCompaction = true })
	defer r.Close()
	for f := 0; f < 4; f++ {
		for i := 0; i < 100; i++ {
			require.NoError(t, r.Put(NewPut(b(fmt.Sprintf("r%03d", i))).AddAt(fam, b(fmt.Sprint("q", f)), 1, b("v"))))
		}
		require.NoError(t, r.Flush())
	}
	for _, reversed := range []bool{false, true} {
		sc, err := r.NewScanner(&Scan{Reversed: reversed})
		require.NoError(t, err)
		res, err := sc.Next()
		require.NoError(t, err)
		require.Len(t, res.Cells, 4)
		require.NoError(t, r.Compact(true))
		n := 1
		for {
			res, err := sc.Next()
			require.NoError(t, err)
			if res == nil {
				break
			}
			require.Len(t, res.Cells, 4)
			n++
		}
		sc.Close()
		require.Equal(t, 100, n)
		// Force a second major compaction next round.
		require.NoError(t, r.Put(NewPut(b("r000")).AddAt(fam, b("q9"), 1, b("v"))))
		require.NoError(t, r.Delete(NewDelete(b("r000")).AddColumns(fam, b("q9"), 1)))
		require.NoError(t, r.Flush())
	}
}

// TestCompactionCrashBeforeInputsRemoved puts back the inputs of a finished
// major compaction, as a crash between publishing its output and deleting
// them would leave them: the next open removes them, and the data is as
// before (no deleted cell comes back).
func TestCompactionCrashBeforeInputsRemoved(t *testing.T) {
	dir := t.TempDir()
	r := openTest(t, dir, func(o *Options) { o.DisableAutoCompaction = true })
	for f := 0; f < 3; f++ {
		for i := 0; i < 20; i++ {
			require.NoError(t, r.Put(NewPut(b(fmt.Sprintf("r%02d", i))).AddAt(fam, b("q"), int64(f+1), b(fmt.Sprint(f)))))
		}
		require.NoError(t, r.Flush())
	}
	require.NoError(t, r.Delete(NewDelete(b("r03"))))
	require.NoError(t, r.Flush())
	before := snapshotRows(t, r)
	saved := map[string][]byte{}
	for _, f := range r.Store("f").Files() {
		data, err := os.ReadFile(f.Path)
		require.NoError(t, err)
		saved[f.Path] = data
	}
	require.NoError(t, r.Compact(true))
	require.NoError(t, r.Close())
	for p, data := range saved {
		require.NoError(t, os.WriteFile(p, data, 0o644))
	}
	r2 := openTest(t, dir, func(o *Options) { o.DisableAutoCompaction = true })
	defer r2.Close()
	require.Len(t, r2.Store("f").Files(), 1)
	require.Equal(t, before, snapshotRows(t, r2))
	require.True(t, getValue(t, r2, "r03", "f", "q") == nil)
}

func TestCompactionDropsExpiredAndRunsInBackground(t *testing.T) {
	var clock atomic.Int64 // the background compactor reads it too
	clock.Store(1_700_000_000_000)
	r, err := Open(t.TempDir(), Options{Families: []FamilyOptions{{Name: "f", TTL: time.Hour}},
		Now: func() time.Time { return time.UnixMilli(clock.Load()) }, CompactionMin: 2})
	require.NoError(t, err)
	defer r.Close()
	// Flushed while live (a flush drops expired cells), then expired.
	require.NoError(t, r.Put(NewPut(b("old")).AddAt(fam, b("q"), clock.Load()-30*time.Minute.Milliseconds(), b("v"))))
	require.NoError(t, r.Flush())
	clock.Add(time.Hour.Milliseconds())
	require.NoError(t, r.Put(NewPut(b("new")).AddAt(fam, b("q"), clock.Load(), b("v"))))
	require.NoError(t, r.Flush())
	// Two files reach CompactionMin: the background compactor merges them
	// and leaves the expired cell out.
	require.Eventually(t, func() bool { return r.Stats().Compactions >= 1 }, 10*time.Second, 10*time.Millisecond)
	cells, _ := countFileCells(t, r, "f")
	require.Equal(t, 1, cells)
	require.NotNil(t, getValue(t, r, "new", "f", "q"))
}
