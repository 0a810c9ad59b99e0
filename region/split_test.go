package region

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/internal/vfs"
	"github.com/stretchr/testify/require"
)

// Region directory names in tests: encoded region names, as a table
// directory holds them.
const (
	parentName = "0123456789abcdef0123456789abcdef"
	daughterA  = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	daughterB  = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	mergedName = "cccccccccccccccccccccccccccccccc"
)

// dump returns every cell a scan of all versions of r returns (forward or
// reversed), one string per cell, rows in the scan's order.
func dump(t *testing.T, r *Region, reversed bool, start, stop []byte) []string {
	t.Helper()
	sc, err := r.NewScanner(&Scan{MaxVersions: 10, Reversed: reversed, StartRow: start, StopRow: stop})
	require.NoError(t, err)
	defer sc.Close()
	var out []string
	for {
		res, err := sc.Next()
		require.NoError(t, err)
		if res == nil {
			return out
		}
		for _, c := range res.Cells {
			out = append(out, fmt.Sprintf("%s/%s:%s/%d=%s", c.Row, c.Family, c.Qualifier, c.Timestamp, c.Value))
		}
	}
}

// rowsOf keeps the cells of dump whose rows are in [lo, hi).
func rowsOf(cells []string, lo, hi []byte) []string {
	var out []string
	for _, c := range cells {
		row := []byte(c[:strings.IndexByte(c, '/')])
		if (lo == nil || bytes.Compare(row, lo) >= 0) && (hi == nil || bytes.Compare(row, hi) < 0) {
			out = append(out, c)
		}
	}
	return out
}

// fillSplittable writes rows over several flushes, with versions, deletes
// of every kind across files, and some writes left in the memstore. Every
// cell's timestamp is later than those written before it, so that what a
// read returns does not depend on when compactions drop delete markers
// (HBase's markers mask later puts of older timestamps until then).
func fillSplittable(t *testing.T, r *Region, rng *rand.Rand) {
	t.Helper()
	ts := int64(1000)
	for round := 0; round < 4; round++ {
		for i := 0; i < 300; i++ {
			row := b(fmt.Sprintf("r%04d", rng.IntN(400)))
			ts++
			switch rng.IntN(10) {
			case 0:
				require.NoError(t, r.Delete(NewDelete(row).AddFamily(fam, ts).AddFamily(fam2, ts)))
			case 1:
				require.NoError(t, r.Delete(NewDelete(row).AddColumns(fam, b("q"), ts)))
			case 2:
				require.NoError(t, r.Delete(NewDelete(row).AddColumn(fam, b("q"), ts-int64(rng.IntN(5)))))
			default:
				require.NoError(t, r.Put(NewPut(row).AddAt(fam, b("q"), ts, b(fmt.Sprintf("v%d", ts))).
					AddAt(fam2, b(fmt.Sprintf("x%d", rng.IntN(3))), ts, b("w"))))
			}
		}
		if round < 3 {
			require.NoError(t, r.Flush())
		}
	}
}

// TestSplitByReference splits a region into two daughters made of
// reference files, checks that they read exactly the parent's rows on
// their side (forward, reversed, Gets, all versions, deletes applied), take
// writes, cannot be split again until compacted, and that a compaction
// replaces the references; then merges the daughters back by reference.
func TestSplitByReference(t *testing.T) {
	table := t.TempDir()
	dir := func(name string) string { return filepath.Join(table, name) }
	noCompact := func(o *Options) { o.DisableAutoCompaction = true }
	p := openTest(t, dir(parentName), noCompact)
	fillSplittable(t, p, rand.New(rand.NewPCG(1, 2)))
	all := dump(t, p, false, nil, nil)
	require.NotEmpty(t, all)
	split, err := p.SplitPoint()
	require.NoError(t, err)
	require.NotNil(t, split)
	require.NoError(t, p.Close())
	lo, hi := rowsOf(all, nil, split), rowsOf(all, split, nil)
	require.NotEmpty(t, lo)
	require.NotEmpty(t, hi)

	require.NoError(t, CreateReferences(nil, dir(daughterA), []Reference{{Parent: dir(parentName), SplitRow: split}}))
	require.NoError(t, CreateReferences(nil, dir(daughterB), []Reference{{Parent: dir(parentName), SplitRow: split, Top: true}}))
	err = CreateReferences(nil, dir(daughterB), []Reference{{Parent: dir(parentName), SplitRow: split, Top: true}})
	require.True(t, errors.Is(err, ErrInvalidArgument), "an existing directory: %v", err)

	a := openTest(t, dir(daughterA), noCompact)
	bb := openTest(t, dir(daughterB), noCompact)
	check := func(r *Region, want []string, lo, hi []byte) {
		t.Helper()
		require.Equal(t, want, dump(t, r, false, nil, nil))
		rev := dump(t, r, true, nil, nil)
		// A reversed scan returns rows backwards, each row's cells in order.
		require.Equal(t, len(want), len(rev))
		require.Equal(t, rowsReversed(want), rev)
		for i := 0; i < 400; i++ {
			row := b(fmt.Sprintf("r%04d", i))
			res, err := r.Get(&Get{Row: row, MaxVersions: 10})
			require.NoError(t, err)
			var got []string
			for _, c := range res.Cells {
				got = append(got, fmt.Sprintf("%s/%s:%s/%d=%s", c.Row, c.Family, c.Qualifier, c.Timestamp, c.Value))
			}
			var exp []string
			if (lo == nil || bytes.Compare(row, lo) >= 0) && (hi == nil || bytes.Compare(row, hi) < 0) {
				exp = rowsOf(want, row, append(append([]byte{}, row...), 0))
			}
			require.Equal(t, exp, got, "Get %s", row)
		}
	}
	check(a, lo, nil, split)
	check(bb, hi, split, nil)
	// A scan that starts in the other half, and reverse scans from past it.
	require.Equal(t, rowsOf(hi, b("r0300"), nil), dump(t, bb, false, b("r0300"), nil))
	require.Equal(t, rowsReversed(lo), dump(t, a, true, b("r9999"), nil))

	require.True(t, a.HasReferences())
	sp, err := a.SplitPoint()
	require.NoError(t, err)
	require.Nil(t, sp, "a daughter with references is not splittable")
	for _, f := range a.Store("f").Files() {
		parent, ok := f.IsReference()
		require.True(t, ok)
		require.True(t, strings.HasPrefix(parent, dir(parentName)))
	}

	// The daughters take writes; their new files sort after the parent's.
	require.NoError(t, a.Put(NewPut(b("r0000")).AddAt(fam, b("q"), 5000, b("new"))))
	require.NoError(t, a.Delete(NewDelete(lowestRow(lo)).AddFamily(fam, 4000).AddFamily(fam2, 4000)))
	require.NoError(t, a.Flush())
	aNow := dump(t, a, false, nil, nil)
	require.Contains(t, aNow, "r0000/f:q/5000=new")

	// A compaction replaces the references.
	res, err := a.CompactStores(false)
	require.NoError(t, err)
	require.NotEmpty(t, res)
	require.False(t, a.HasReferences())
	require.Equal(t, aNow, dump(t, a, false, nil, nil))
	refs, err := ReferencesTo(nil, dir(daughterA), parentName)
	require.NoError(t, err)
	require.False(t, refs)
	refs, err = ReferencesTo(nil, dir(daughterB), parentName)
	require.NoError(t, err)
	require.True(t, refs)
	require.NoError(t, a.Close())
	a = openTest(t, dir(daughterA), noCompact)
	require.Equal(t, aNow, dump(t, a, false, nil, nil))

	// A daughter that still has references cannot be a merge's parent.
	require.NoError(t, a.Close())
	require.NoError(t, bb.Close())
	err = CreateReferences(nil, dir(mergedName), []Reference{{Parent: dir(daughterA), SplitRow: nil, Top: true},
		{Parent: dir(daughterB), SplitRow: split, Top: true}})
	require.True(t, errors.Is(err, ErrInvalidArgument), "%v", err)
	require.NoError(t, removeAllDir(dir(mergedName)))
	bb = openTest(t, dir(daughterB), noCompact)
	_, err = bb.CompactStores(true)
	require.NoError(t, err)
	bNow := dump(t, bb, false, nil, nil)
	require.NoError(t, bb.Close())

	require.NoError(t, CreateReferences(nil, dir(mergedName), []Reference{{Parent: dir(daughterA), SplitRow: nil, Top: true},
		{Parent: dir(daughterB), SplitRow: split, Top: true}}))
	m := openTest(t, dir(mergedName), noCompact)
	defer m.Close()
	merged := append(append([]string{}, aNow...), bNow...)
	require.Equal(t, merged, dump(t, m, false, nil, nil))
	require.Equal(t, rowsReversed(merged), dump(t, m, true, nil, nil))
	sp, err = m.SplitPoint()
	require.NoError(t, err)
	require.Nil(t, sp)
	_, err = m.CompactStores(false)
	require.NoError(t, err)
	require.False(t, m.HasReferences())
	require.Equal(t, merged, dump(t, m, false, nil, nil))
	sp, err = m.SplitPoint()
	require.NoError(t, err)
	require.NotNil(t, sp, "compacted, the merged region splits again")
}

// TestDaughterCompactsReferencesOnOpen: a daughter opened with automatic
// compactions rewrites its references by itself, as HBase's daughters do.
func TestDaughterCompactsReferencesOnOpen(t *testing.T) {
	table := t.TempDir()
	p := openTest(t, filepath.Join(table, parentName), nil)
	fillSplittable(t, p, rand.New(rand.NewPCG(3, 4)))
	split, err := p.SplitPoint()
	require.NoError(t, err)
	want := rowsOf(dump(t, p, false, nil, nil), split, nil)
	require.NoError(t, p.Close())
	d := filepath.Join(table, daughterB)
	require.NoError(t, CreateReferences(nil, d, []Reference{{Parent: filepath.Join(table, parentName), SplitRow: split, Top: true}}))
	var changed atomic.Int64
	r := openTest(t, d, func(o *Options) { o.StoreFilesChanged = func() { changed.Add(1) } })
	defer r.Close()
	// The compactor swaps its output in before it unlinks the reference
	// files, so the region stops reading references a moment before the
	// directory stops holding them: wait for both.
	deadline := time.Now().Add(30 * time.Second)
	for {
		refs, err := ReferencesTo(nil, d, parentName)
		require.NoError(t, err)
		if !r.HasReferences() && !refs {
			break
		}
		require.True(t, time.Now().Before(deadline), "the daughter kept its references (in use: %v, on disk: %v)", r.HasReferences(), refs)
		time.Sleep(5 * time.Millisecond)
	}
	require.Equal(t, want, dump(t, r, false, nil, nil))
	// The owner heard of the compaction, so it can look at the parent.
	require.Eventually(t, func() bool { return changed.Load() > 0 }, 10*time.Second, 5*time.Millisecond)
}

// TestCloseFlushesLateWrites: what is written while Close's first flush
// runs is in the store files too, so a region's files hold every write it
// acknowledged once Close returns.
func TestCloseFlushesLateWrites(t *testing.T) {
	dir := t.TempDir()
	r := openTest(t, dir, func(o *Options) { o.DisableAutoCompaction = true })
	stop := make(chan struct{})
	done := make(chan int)
	go func() {
		n := 0
		for {
			select {
			case <-stop:
				done <- n
				return
			default:
			}
			if err := r.Put(NewPut(b(fmt.Sprintf("w%06d", n))).Add(fam, b("q"), b("v"))); err != nil {
				require.True(t, errors.Is(err, ErrClosed), "%v", err)
				done <- n
				return
			}
			n++
		}
	}()
	time.Sleep(20 * time.Millisecond)
	require.NoError(t, r.Close())
	close(stop)
	n := <-done
	// Reopen without the WAL: only the store files.
	require.NoError(t, removeAllDir(filepath.Join(dir, "wal")))
	r = openTest(t, dir, nil)
	defer r.Close()
	for i := 0; i < n; i++ {
		require.Equal(t, "v", string(getValue(t, r, fmt.Sprintf("w%06d", i), "f", "q")), "row %d of %d", i, n)
	}
}

// TestReferenceFile: the reference format is HBase's (PB magic, splitkey a
// first-on-row key, TOP 0 / BOTTOM 1), names parse as HBase's, and damaged
// references are corruption.
func TestReferenceFile(t *testing.T) {
	top := encodeReference(b("row5"), true)
	want := append([]byte(encoding.PBMagic), 0x0a, byte(len(encoding.FirstOnRow(nil, b("row5")))))
	want = append(append(want, encoding.FirstOnRow(nil, b("row5"))...), 0x10, 0x00)
	require.Equal(t, want, top)
	row, isTop, err := decodeReference(top)
	require.NoError(t, err)
	require.Equal(t, "row5", string(row))
	require.True(t, isTop)
	row, isTop, err = decodeReference(encodeReference(b("x"), false))
	require.NoError(t, err)
	require.Equal(t, "x", string(row))
	require.False(t, isTop)
	for _, bad := range [][]byte{nil, []byte("PBUF"), top[:len(top)-2], append([]byte(encoding.PBMagic), 0x0a, 0x02, 0, 9, 0x10, 0)} {
		_, _, err := decodeReference(bad)
		require.Error(t, err, "%q", bad)
	}

	store := randomHex() + storeFileSuffix
	for _, store := range []string{store, randomHex(), randomHex() + "_SeqId_7_"} {
		// The embedded store's names, HBase's, and a bulk-loaded file's.
		file, parent, ok := parseReferenceName(referenceName(store, parentName))
		require.True(t, ok, store)
		require.Equal(t, store, file)
		require.Equal(t, parentName, parent)
	}
	for _, name := range []string{store, "x.hfile", store + ".", store + ".Z1", "junk." + parentName, ".tmp"} {
		_, _, ok := parseReferenceName(name)
		require.False(t, ok, name)
	}

	// A reference whose parent file is gone fails the open as corruption.
	table := t.TempDir()
	p := openTest(t, filepath.Join(table, parentName), nil)
	require.NoError(t, p.Put(NewPut(b("a")).Add(fam, b("q"), b("1"))))
	require.NoError(t, p.Put(NewPut(b("z")).Add(fam, b("q"), b("1"))))
	require.NoError(t, p.Close())
	d := filepath.Join(table, daughterA)
	require.NoError(t, CreateReferences(nil, d, []Reference{{Parent: filepath.Join(table, parentName), SplitRow: b("m")}}))
	require.NoError(t, removeAllDir(filepath.Join(table, parentName)))
	_, err = Open(d, Options{})
	require.True(t, errors.Is(err, ErrCorruption), "%v", err)
}

// rowsReversed reorders dump output as a reversed scan returns it: rows
// backwards, each row's cells in their order.
func rowsReversed(cells []string) []string {
	var rows [][]string
	for _, c := range cells {
		row := c[:strings.IndexByte(c, '/')]
		if n := len(rows); n > 0 && strings.HasPrefix(rows[n-1][0], row+"/") {
			rows[n-1] = append(rows[n-1], c)
			continue
		}
		rows = append(rows, []string{c})
	}
	var out []string
	for i := len(rows) - 1; i >= 0; i-- {
		out = append(out, rows[i]...)
	}
	return out
}

func lowestRow(cells []string) []byte { return b(cells[0][:strings.IndexByte(cells[0], '/')]) }

func removeAllDir(dir string) error { return vfs.RemoveAll(DefaultFS, dir) }

// TestCompactedReferenceLeftByCrash: a reference a compaction rewrote but
// whose removal a power loss undid, after the janitor removed the parent's
// files, is recognised as a compaction input and removed on open rather
// than failing it.
func TestCompactedReferenceLeftByCrash(t *testing.T) {
	table := t.TempDir()
	pdir, ddir := filepath.Join(table, parentName), filepath.Join(table, daughterA)
	p := openTest(t, pdir, nil)
	for i := 0; i < 20; i++ {
		require.NoError(t, p.Put(NewPut(b(fmt.Sprintf("r%02d", i))).Add(fam, b("q"), b("v"))))
	}
	require.NoError(t, p.Close())
	require.NoError(t, CreateReferences(nil, ddir, []Reference{{Parent: pdir, SplitRow: b("r10")}}))
	refs, err := DefaultFS.List(filepath.Join(ddir, "f"))
	require.NoError(t, err)
	require.Len(t, refs, 1)
	ref, err := vfs.ReadFile(DefaultFS, filepath.Join(ddir, "f", refs[0]))
	require.NoError(t, err)
	d := openTest(t, ddir, func(o *Options) { o.DisableAutoCompaction = true })
	want := dump(t, d, false, nil, nil)
	require.Len(t, want, 10)
	_, err = d.CompactStores(false)
	require.NoError(t, err)
	require.NoError(t, d.Close())
	has, err := ReferencesTo(nil, ddir, parentName)
	require.NoError(t, err)
	require.False(t, has)
	require.NoError(t, removeAllDir(pdir))
	require.NoError(t, writeSynced(DefaultFS, filepath.Join(ddir, "f", refs[0]), ref)) // the crash's doing
	d = openTest(t, ddir, nil)
	defer d.Close()
	require.False(t, d.HasReferences())
	require.Equal(t, want, dump(t, d, false, nil, nil))
	has, err = ReferencesTo(nil, ddir, parentName)
	require.NoError(t, err)
	require.False(t, has)
}
