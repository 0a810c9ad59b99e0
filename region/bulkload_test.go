package region

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/hfile"
	"github.com/regionkv/regionkv/internal/vfs"
	"github.com/stretchr/testify/require"
)

// blCell is a cell of a test HFile.
type blCell struct {
	row, qual, val string
	ts             int64
	typ            encoding.Type // TypePut if zero
}

// writeTestHFile writes cells (in order) of family to path on fs.
func writeTestHFile(t testing.TB, fs vfs.FS, path, family string, cells []blCell, o hfile.WriterOptions) {
	t.Helper()
	require.NoError(t, vfs.MkdirAllSync(fs, filepath.Dir(path), 0o755))
	f, err := fs.Create(path)
	require.NoError(t, err)
	w, err := hfile.NewWriter(f, o)
	require.NoError(t, err)
	for _, c := range cells {
		typ := c.typ
		if typ == 0 {
			typ = encoding.TypePut
		}
		kv := encoding.KeyValue{Row: b(c.row), Family: b(family), Qualifier: b(c.qual), Timestamp: c.ts, Type: typ, Value: b(c.val)}
		require.NoError(t, w.Append(&kv))
	}
	require.NoError(t, w.Close())
	require.NoError(t, f.Sync())
	require.NoError(t, f.Close())
}

// blRows returns a put of q for each row from..to-1 ("r%03d"), value
// prefix+row, at ts.
func blRows(from, to int, prefix string, ts int64) []blCell {
	var cells []blCell
	for i := from; i < to; i++ {
		row := fmt.Sprintf("r%03d", i)
		cells = append(cells, blCell{row: row, qual: "q", val: prefix + row, ts: ts})
	}
	return cells
}

func TestBulkLoadMovesFilesIntoStores(t *testing.T) {
	dir, src := t.TempDir(), t.TempDir()
	r := openTest(t, dir, nil)
	defer r.Close()
	require.NoError(t, r.Put(NewPut(b("r500")).Add(fam, b("q"), b("written"))))
	// Files in the family's options and in others: each keeps its own.
	writeTestHFile(t, vfs.Default, filepath.Join(src, "f", "a"), "f", blRows(0, 100, "f-", 1000),
		hfile.WriterOptions{Encoding: encoding.EncodingPrefix, Compression: hfile.CompressionGZ, BloomType: hfile.BloomRowCol})
	writeTestHFile(t, vfs.Default, filepath.Join(src, "g", "b"), "g", blRows(50, 150, "g-", 1000), hfile.WriterOptions{})
	files := []BulkLoadFile{{Family: "f", Path: filepath.Join(src, "f", "a")}, {Family: "g", Path: filepath.Join(src, "g", "b")}}
	res, err := r.BulkLoadHFiles(context.Background(), files, BulkLoadOptions{})
	require.NoError(t, err)
	require.Len(t, res.StoreFiles, 2)
	require.Greater(t, uint64(res.SeqNum), uint64(0))
	for i, p := range res.StoreFiles {
		require.Equal(t, filepath.Join(dir, files[i].Family), filepath.Dir(p))
		seq, ok := parseStoreFileName(filepath.Base(p))
		require.True(t, ok, p)
		require.Equal(t, res.SeqNum, seq)
		// Moved, not copied.
		_, err := os.Stat(files[i].Path)
		require.True(t, errors.Is(err, os.ErrNotExist), "source %s should be gone", files[i].Path)
	}
	check := func(r *Region) {
		t.Helper()
		require.Equal(t, "f-r007", string(getValue(t, r, "r007", "f", "q")))
		require.Equal(t, "g-r120", string(getValue(t, r, "r120", "g", "q")))
		require.Equal(t, "written", string(getValue(t, r, "r500", "f", "q")))
		sc, err := r.NewScanner(&Scan{})
		require.NoError(t, err)
		rows := 0
		for {
			res, err := sc.Next()
			require.NoError(t, err)
			if res == nil {
				break
			}
			rows++
		}
		sc.Close()
		require.Equal(t, 151, rows) // r000..r149 and r500
	}
	check(r)
	require.Equal(t, int64(2), r.Stats().BulkLoadedFiles)
	// The memstore was flushed first.
	require.Equal(t, int64(0), r.Stats().MemStoreSize)

	// A reopen finds the files by name, with the load's sequence id.
	require.NoError(t, r.Close())
	r = openTest(t, dir, nil)
	check(r)
	var bulk int
	for _, f := range r.Store("f").Files() {
		if f.BulkLoaded {
			bulk++
			require.Equal(t, res.SeqNum, f.MaxSeq)
		}
	}
	require.Equal(t, 1, bulk)
	// And a major compaction keeps it all.
	require.NoError(t, r.Compact(true))
	require.Len(t, r.Store("f").Files(), 1)
	require.False(t, r.Store("f").Files()[0].BulkLoaded)
	check(r)
	require.NoError(t, r.Close())
	r = openTest(t, dir, nil)
	defer r.Close()
	check(r)
}

func TestBulkLoadHBaseFile(t *testing.T) {
	// Written by HBase 2.6 (family cf, GZ, ROW bloom, 25 cells "aaa".."aay"
	// with sequence ids 2..26): copied, so the read-only fixture stays.
	dir := t.TempDir()
	r, err := Open(dir, Options{Families: []FamilyOptions{{Name: "cf"}}})
	require.NoError(t, err)
	defer r.Close()
	// Many writes first, so that the region's sequence ids are past the
	// file's own: its cells must read at the load's id, not theirs.
	for i := 0; i < 40; i++ {
		require.NoError(t, r.Put(NewPut(b(fmt.Sprintf("zz%02d", i))).Add(b("cf"), b("q"), b("x"))))
	}
	fixture := filepath.Join("..", "hfile", "testdata", "v3-gz-rowbloom-25cells.hfile")
	res, err := r.BulkLoadHFiles(context.Background(), []BulkLoadFile{{Family: "cf", Path: fixture}}, BulkLoadOptions{CopyFiles: true})
	require.NoError(t, err)
	require.Greater(t, uint64(res.SeqNum), uint64(40))
	_, err = os.Stat(fixture)
	require.NoError(t, err, "a copied file stays")
	for i := 0; i < 25; i++ {
		row := "aa" + string(rune('a'+i))
		got, err := r.Get(NewGet(b(row)))
		require.NoError(t, err)
		require.Len(t, got.Cells, 1, row)
		require.Equal(t, row, string(got.Cells[0].Value))
		require.Equal(t, res.SeqNum, got.Cells[0].SeqNum)
	}
	require.NoError(t, r.Close())
	r, err = Open(dir, Options{})
	require.NoError(t, err)
	defer r.Close()
	require.Equal(t, "aam", string(getValue(t, r, "aam", "cf", "")))
}

func TestBulkLoadRefusals(t *testing.T) {
	dir, src := t.TempDir(), t.TempDir()
	r := openTest(t, dir, func(o *Options) { o.StartKey, o.EndKey = b("r100"), b("r200") })
	defer r.Close()
	ctx := context.Background()
	inside := filepath.Join(src, "inside")
	writeTestHFile(t, vfs.Default, inside, "f", blRows(100, 200, "in-", 1), hfile.WriterOptions{})
	load := func(files ...BulkLoadFile) error {
		_, err := r.BulkLoadHFiles(ctx, files, BulkLoadOptions{})
		return err
	}
	untouched := func() {
		t.Helper()
		_, err := os.Stat(inside)
		require.NoError(t, err, "a refused load leaves every file where it was")
		require.Empty(t, getValue(t, r, "r150", "f", "q"), "nothing of a refused load is read")
		require.Zero(t, r.Stats().BulkLoadedFiles)
	}

	straddling := filepath.Join(src, "straddling")
	writeTestHFile(t, vfs.Default, straddling, "f", blRows(150, 250, "x-", 1), hfile.WriterOptions{})
	err := load(BulkLoadFile{Family: "f", Path: inside}, BulkLoadFile{Family: "f", Path: straddling})
	requireIs(t, err, ErrWrongRegion)
	require.Contains(t, err.Error(), "Bulk load file "+straddling+" does not fit inside region")
	untouched()
	before := filepath.Join(src, "before")
	writeTestHFile(t, vfs.Default, before, "f", blRows(0, 100, "x-", 1), hfile.WriterOptions{})
	requireIs(t, load(BulkLoadFile{Family: "f", Path: before}), ErrWrongRegion)
	// The end key is exclusive.
	atEnd := filepath.Join(src, "atend")
	writeTestHFile(t, vfs.Default, atEnd, "f", blRows(199, 201, "x-", 1), hfile.WriterOptions{})
	requireIs(t, load(BulkLoadFile{Family: "f", Path: atEnd}), ErrWrongRegion)

	requireIs(t, load(BulkLoadFile{Family: "f", Path: inside}, BulkLoadFile{Family: "nope", Path: inside}), ErrNoSuchFamily)
	untouched()
	missing := load(BulkLoadFile{Family: "f", Path: inside}, BulkLoadFile{Family: "g", Path: filepath.Join(src, "missing")})
	requireIs(t, missing, os.ErrNotExist)
	untouched()

	// Cells of another family than the store's.
	other := filepath.Join(src, "other")
	writeTestHFile(t, vfs.Default, other, "g", blRows(100, 110, "x-", 1), hfile.WriterOptions{})
	err = load(BulkLoadFile{Family: "f", Path: inside}, BulkLoadFile{Family: "f", Path: other})
	requireIs(t, err, ErrInvalidHFile)
	requireIs(t, err, ErrInvalidArgument)
	untouched()

	// No cells.
	empty := filepath.Join(src, "empty")
	writeTestHFile(t, vfs.Default, empty, "f", nil, hfile.WriterOptions{})
	requireIs(t, load(BulkLoadFile{Family: "f", Path: empty}), ErrInvalidHFile)

	// Out of order: a row of a single-block file rewritten in place, its
	// checksums recomputed, so that only the order is wrong.
	unsorted := filepath.Join(src, "unsorted")
	writeTestHFile(t, vfs.Default, unsorted, "f", blRows(100, 110, "x-", 1), hfile.WriterOptions{})
	rewriteRowInFirstBlock(t, unsorted, "r105", "r199")
	err = load(BulkLoadFile{Family: "f", Path: unsorted})
	requireIs(t, err, ErrInvalidHFile)
	require.Contains(t, err.Error(), "out of order")

	// Not an HFile, and an HFile HBase wrote with a damaged block.
	junk := filepath.Join(src, "junk")
	require.NoError(t, os.WriteFile(junk, make([]byte, 4096), 0o644))
	requireIs(t, load(BulkLoadFile{Family: "f", Path: inside}, BulkLoadFile{Family: "f", Path: junk}), ErrCorruption)
	r2 := openTest(t, t.TempDir(), func(o *Options) { o.Families = []FamilyOptions{{Name: "cf"}} })
	defer r2.Close()
	_, err = r2.BulkLoadHFiles(ctx, []BulkLoadFile{{Family: "cf", Path: filepath.Join("..", "hfile", "testdata", "v3-gz-corrupt-block.hfile")}}, BulkLoadOptions{CopyFiles: true})
	requireIs(t, err, ErrCorruption)

	requireIs(t, load(BulkLoadFile{Family: "f", Path: inside}, BulkLoadFile{Family: "f", Path: inside}), ErrInvalidArgument)
	requireIs(t, load(), ErrInvalidArgument)
	requireIs(t, load(BulkLoadFile{Family: "f", Path: filepath.Join(dir, ".regioninfo")}), ErrInvalidArgument)
	untouched()

	// After all that, the good file loads.
	require.NoError(t, load(BulkLoadFile{Family: "f", Path: inside}))
	require.Equal(t, "in-r150", string(getValue(t, r, "r150", "f", "q")))
}

// rewriteRowInFirstBlock replaces the row from with to (same length) in
// the first data block of an unencoded, uncompressed HFile and fixes the
// block's checksums (HBase's layout: a 33-byte header whose last field is
// the size the checksums cover, then one CRC32C per bytesPerChecksum).
func rewriteRowInFirstBlock(t *testing.T, path, from, to string) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, len(from), len(to))
	require.Equal(t, "DATABLK*", string(data[:8]))
	bpc := int(binary.BigEndian.Uint32(data[25:29]))
	covered := int(binary.BigEndian.Uint32(data[29:33]))
	i := indexOf(data[:covered], []byte(from))
	require.GreaterOrEqual(t, i, 33)
	copy(data[i:], to)
	table := crc32.MakeTable(crc32.Castagnoli)
	sums := data[covered:]
	for off, n := 0, 0; off < covered; off, n = off+bpc, n+1 {
		end := min(off+bpc, covered)
		binary.BigEndian.PutUint32(sums[4*n:], crc32.Checksum(data[off:end], table))
	}
	require.NoError(t, os.WriteFile(path, data, 0o644))
}

func indexOf(b, sub []byte) int {
	for i := 0; i+len(sub) <= len(b); i++ {
		if string(b[i:i+len(sub)]) == string(sub) {
			return i
		}
	}
	return -1
}

// TestBulkLoadSeqIDOrdering: a loaded cell and a written one with the same
// row, column, timestamp and type: the later wins (HBase: the larger
// sequence id), wherever the written one is (memstore, file, compacted).
func TestBulkLoadSeqIDOrdering(t *testing.T) {
	for _, flushFirst := range []bool{false, true} {
		t.Run(fmt.Sprintf("flushed=%v", flushFirst), func(t *testing.T) {
			dir, src := t.TempDir(), t.TempDir()
			r := openTest(t, dir, func(o *Options) { o.Families = []FamilyOptions{{Name: "f", MaxVersions: 1}} })
			defer func() { r.Close() }()
			ctx := context.Background()
			put := func(row, val string, ts int64) {
				require.NoError(t, r.Put(NewPut(b(row)).AddAt(fam, b("q"), ts, b(val))))
			}
			put("a", "old", 100)
			put("b", "old", 100)
			put("d", "old", 100)
			// A delete marker at a later timestamp hides a loaded put
			// below it, whatever their sequence ids (as in HBase without
			// NEW_VERSION_BEHAVIOR).
			require.NoError(t, r.Delete(NewDelete(b("c")).AddColumns(fam, b("q"), 200)))
			if flushFirst {
				require.NoError(t, r.Flush())
			}
			p := filepath.Join(src, "x")
			writeTestHFile(t, vfs.Default, p, "f", []blCell{
				{row: "a", qual: "q", val: "bulk", ts: 100},
				{row: "b", qual: "q", val: "bulk-older", ts: 99},
				{row: "c", qual: "q", val: "bulk", ts: 150},
				{row: "d", qual: "q", ts: 100, typ: encoding.TypeDeleteColumn},
				{row: "e", qual: "q", val: "bulk", ts: 100},
			}, hfile.WriterOptions{})
			_, err := r.BulkLoadHFiles(ctx, []BulkLoadFile{{Family: "f", Path: p}}, BulkLoadOptions{})
			require.NoError(t, err)
			put("e", "later", 100)
			want := map[string]string{"a": "bulk", "b": "old", "c": "", "d": "", "e": "later"}
			check := func(when string) {
				t.Helper()
				for row, v := range want {
					require.Equal(t, v, string(getValue(t, r, row, "f", "q")), "%s: row %s", when, row)
				}
			}
			check("after the load")
			require.NoError(t, r.Flush())
			check("after a flush")
			require.NoError(t, r.Close())
			r = openTest(t, dir, func(o *Options) { o.Families = nil })
			check("after a reopen")
			require.NoError(t, r.Compact(true))
			check("after a major compaction")
			require.NoError(t, r.Close())
			r = openTest(t, dir, func(o *Options) { o.Families = nil })
			check("after a reopen of the compacted store")
		})
	}
}

// TestBulkLoadAtomicAcrossFamilies: readers running during loads into two
// families see every row of a load in both or in neither.
func TestBulkLoadAtomicAcrossFamilies(t *testing.T) {
	dir, src := t.TempDir(), t.TempDir()
	r := openTest(t, dir, nil)
	defer r.Close()
	ctx := context.Background()
	const loads = 8
	var stop atomic.Bool
	var wg sync.WaitGroup
	var torn atomic.Int64
	var reads atomic.Int64
	for g := 0; g < 2; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				for l := 0; l < loads; l++ {
					row := fmt.Sprintf("r%03d", l*10+5)
					res, err := r.Get(NewGet(b(row)))
					if err != nil {
						t.Error(err)
						return
					}
					if (res.Value(fam, b("q")) == nil) != (res.Value(fam2, b("q")) == nil) {
						torn.Add(1)
					}
					reads.Add(1)
				}
			}
		}()
	}
	// Writers too: their writes wait on the load's sequence id.
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; !stop.Load(); i++ {
			if err := r.Put(NewPut(b(fmt.Sprintf("w%05d", i))).Add(fam, b("q"), b("v"))); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	for l := 0; l < loads; l++ {
		pf, pg := filepath.Join(src, fmt.Sprintf("f%d", l)), filepath.Join(src, fmt.Sprintf("g%d", l))
		writeTestHFile(t, vfs.Default, pf, "f", blRows(l*10, l*10+10, "f", 1), hfile.WriterOptions{})
		writeTestHFile(t, vfs.Default, pg, "g", blRows(l*10, l*10+10, "g", 1), hfile.WriterOptions{})
		_, err := r.BulkLoadHFiles(ctx, []BulkLoadFile{{Family: "f", Path: pf}, {Family: "g", Path: pg}}, BulkLoadOptions{})
		require.NoError(t, err)
	}
	stop.Store(true)
	wg.Wait()
	require.Zero(t, torn.Load(), "reads that saw one family of a load and not the other (of %d)", reads.Load())
	for l := 0; l < loads; l++ {
		row := fmt.Sprintf("r%03d", l*10+5)
		require.Equal(t, "f"+row, string(getValue(t, r, row, "f", "q")))
		require.Equal(t, "g"+row, string(getValue(t, r, row, "g", "q")))
	}
}

// TestBulkLoadMarkerNotReplayed: the WAL's BULK_LOAD marker is a record,
// never data, even in a family named as the marker's.
func TestBulkLoadMarkerNotReplayed(t *testing.T) {
	dir, src := t.TempDir(), t.TempDir()
	o := Options{Families: []FamilyOptions{{Name: "METAFAMILY"}}, Durability: FSyncWAL}
	r, err := Open(dir, o)
	require.NoError(t, err)
	p := filepath.Join(src, "x")
	writeTestHFile(t, vfs.Default, p, "METAFAMILY", blRows(0, 3, "v", 1), hfile.WriterOptions{})
	_, err = r.BulkLoadHFiles(context.Background(), []BulkLoadFile{{Family: "METAFAMILY", Path: p}}, BulkLoadOptions{})
	require.NoError(t, err)
	require.NoError(t, r.Put(NewPut(b("after")).Add(b("METAFAMILY"), b("q"), b("v"))))
	// Abandon the region without a flush (a crash), then replay.
	abandon(r)
	require.NoError(t, r.wal.Close())
	r2, err := Open(dir, o)
	require.NoError(t, err)
	defer r2.Close()
	res, err := r2.Get(NewGet(walMetaRow))
	require.NoError(t, err)
	require.True(t, res.IsEmpty(), "the marker came back as data: %v", res.Cells)
	require.Equal(t, "v", string(getValue(t, r2, "after", "METAFAMILY", "q")))
	require.Equal(t, "vr001", string(getValue(t, r2, "r001", "METAFAMILY", "q")))
}

// requireIs checks errors.Is with cockroachdb/errors, which also sees marks
// (the standard library's does not).
func requireIs(t testing.TB, err, target error) {
	t.Helper()
	require.Error(t, err)
	require.True(t, errors.Is(err, target), "want %v in the chain of %+v", target, err)
}

// TestBulkLoadCompactionEventIgnored: a loaded file that a compaction in
// another store wrote names that store's inputs (COMPACTION_EVENT_KEY);
// they are not this store's files, even where the names match.
func TestBulkLoadCompactionEventIgnored(t *testing.T) {
	dir, src := t.TempDir(), t.TempDir()
	r := openTest(t, dir, nil)
	require.NoError(t, r.Put(NewPut(b("a")).Add(fam, b("q"), b("mine"))))
	require.NoError(t, r.Flush())
	mine := filepath.Base(r.Store("f").Files()[0].Path)
	p := filepath.Join(src, "x")
	require.NoError(t, os.MkdirAll(src, 0o755))
	f, err := os.Create(p)
	require.NoError(t, err)
	w, err := hfile.NewWriter(f, hfile.WriterOptions{})
	require.NoError(t, err)
	kv := encoding.KeyValue{Row: b("z"), Family: fam, Qualifier: b("q"), Timestamp: 1, Type: encoding.TypePut, Value: b("theirs")}
	require.NoError(t, w.Append(&kv))
	tracker := append([]byte(encoding.PBMagic), 0x0a, byte(len(mine)))
	require.NoError(t, w.SetFileInfo(fileInfoCompactionEvent, append(tracker, mine...)))
	require.NoError(t, w.Close())
	require.NoError(t, f.Close())
	_, err = r.BulkLoadHFiles(context.Background(), []BulkLoadFile{{Family: "f", Path: p}}, BulkLoadOptions{})
	require.NoError(t, err)
	require.NoError(t, r.Close())
	r = openTest(t, dir, nil)
	defer r.Close()
	require.Equal(t, "mine", string(getValue(t, r, "a", "f", "q")))
	require.Equal(t, "theirs", string(getValue(t, r, "z", "f", "q")))
	_, err = os.Stat(filepath.Join(dir, "f", mine))
	require.NoError(t, err)
}
