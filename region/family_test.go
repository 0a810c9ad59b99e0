package region

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/hfile"
	"github.com/stretchr/testify/require"
)

// familyNames lists the families of r.
func familyNames(r *Region) []string {
	var out []string
	for _, f := range r.Families() {
		out = append(out, f.Name)
	}
	return out
}

func putCell(t *testing.T, r *Region, row, f, q, v string) {
	t.Helper()
	require.NoError(t, r.Put(NewPut(b(row)).Add(b(f), b(q), b(v))))
}

func requireInvalid(t *testing.T, err error) {
	t.Helper()
	require.True(t, errors.Is(err, ErrInvalidArgument), "want ErrInvalidArgument, got %v", err)
}

// abandon stops r without flushing or closing it, as a killed process
// would leave it (its writes are in the WAL), and releases its lock so
// that the directory can be opened again.
func abandon(r *Region) {
	r.closed.Store(true)
	r.bgCancel()
	close(r.stop)
	<-r.bgDone
	<-r.compactDone
	r.lock.Close()
}

func TestAddFamily(t *testing.T) {
	dir := t.TempDir()
	r := openTest(t, dir, nil)
	putCell(t, r, "r1", "f", "q", "v1")

	require.NoError(t, r.AddFamily(FamilyOptions{Name: "h", MaxVersions: 2}))
	require.Equal(t, []string{"f", "g", "h"}, familyNames(r))
	// Writable and readable at once, in a batch with the old families too.
	require.NoError(t, r.Put(NewPut(b("r1")).Add(b("h"), b("q"), b("h1")).Add(fam, b("q2"), b("f2"))))
	require.Equal(t, "h1", string(getValue(t, r, "r1", "h", "q")))
	res, err := r.Get(NewGet(b("r1")))
	require.NoError(t, err)
	require.Len(t, res.Cells, 3)
	require.Equal(t, 2, r.Store("h").Options().MaxVersions)

	err = r.AddFamily(FamilyOptions{Name: "h"})
	require.ErrorIs(t, err, ErrFamilyExists)
	requireInvalid(t, r.AddFamily(FamilyOptions{Name: "bad/name"}))
	requireInvalid(t, r.AddFamily(FamilyOptions{Name: "x", Compression: hfile.CompressionLZO}))
	requireInvalid(t, r.AddFamily(FamilyOptions{Name: "x", MaxVersions: 1, MinVersions: 2}))

	// A crash now: the new family and its acknowledged write come back
	// from .regioninfo and the WAL.
	crashed := crashCopy(t, r)
	r2, err := Open(crashed, Options{})
	require.NoError(t, err)
	require.Equal(t, []string{"f", "g", "h"}, familyNames(r2))
	require.Equal(t, "h1", string(getValue(t, r2, "r1", "h", "q")))
	require.Equal(t, 2, r2.Store("h").Options().MaxVersions)
	require.NoError(t, r2.Close())

	// Flushed and reopened cleanly, with the family left out of the
	// options: refused, unless the caller drops it.
	require.NoError(t, r.Close())
	_, err = Open(dir, Options{Families: []FamilyOptions{{Name: "f"}, {Name: "g"}}})
	requireInvalid(t, err)
	r3, err := Open(dir, Options{Families: []FamilyOptions{{Name: "f", MaxVersions: 3}, {Name: "g"}}, DropFamilies: true})
	require.NoError(t, err)
	require.Equal(t, []string{"f", "g"}, familyNames(r3))
	require.NoDirExists(t, filepath.Join(dir, "h"))
	require.Equal(t, "f2", string(getValue(t, r3, "r1", "f", "q2")))
	require.NoError(t, r3.Close())
}

func TestDeleteFamily(t *testing.T) {
	dir := t.TempDir()
	r := openTest(t, dir, nil)
	for i := 0; i < 20; i++ {
		require.NoError(t, r.Put(NewPut(b(fmt.Sprintf("r%02d", i))).Add(fam, b("q"), b("f")).Add(fam2, b("q"), b("g"))))
	}
	require.NoError(t, r.Flush())
	for i := 0; i < 20; i++ {
		putCell(t, r, fmt.Sprintf("r%02d", i), "g", "q2", "unflushed")
	}
	before := r.Stats().MemStoreSize
	require.NotZero(t, before)
	require.DirExists(t, filepath.Join(dir, "g"))

	require.NoError(t, r.DeleteFamily("g"))
	require.Equal(t, []string{"f"}, familyNames(r))
	require.NoDirExists(t, filepath.Join(dir, "g"))
	require.Zero(t, r.Stats().MemStoreSize, "the deleted family's memstore is still counted")
	require.Zero(t, r.Stats().MemStoreHeapSize, "the deleted family's memstore is still counted")
	_, err := r.Get(NewGet(b("r01")).AddFamily(fam2))
	require.ErrorIs(t, err, ErrNoSuchFamily)
	require.ErrorIs(t, r.Put(NewPut(b("r01")).Add(fam2, b("q"), b("x"))), ErrNoSuchFamily)
	_, err = r.Increment(NewIncrement(b("r01")).Add(fam2, b("n"), 1))
	require.ErrorIs(t, err, ErrNoSuchFamily)
	res, err := r.Get(NewGet(b("r01")))
	require.NoError(t, err)
	require.Len(t, res.Cells, 1)
	require.Equal(t, "f", string(res.Cells[0].Family))
	// A whole-row delete covers the families left.
	require.NoError(t, r.Delete(NewDelete(b("r02"))))

	require.ErrorIs(t, r.DeleteFamily("g"), ErrNoSuchFamily)
	requireInvalid(t, r.DeleteFamily("f"))

	// A crash now (the WAL still holds the family's unflushed writes):
	// nothing of it comes back, whether the options name it or not.
	for _, fams := range [][]FamilyOptions{nil, {{Name: "f"}, {Name: "g"}}} {
		crashed := crashCopy(t, r)
		r2, err := Open(crashed, Options{Families: fams})
		require.NoError(t, err)
		res, err := r2.Get(NewGet(b("r01")))
		require.NoError(t, err)
		require.Len(t, res.Cells, 1, "families %v: %v", fams, res.Cells)
		require.NoError(t, r2.Close())
	}

	// Added again, it starts empty, now and after a crash.
	require.NoError(t, r.AddFamily(FamilyOptions{Name: "g"}))
	require.Nil(t, getValue(t, r, "r01", "g", "q"))
	require.Nil(t, getValue(t, r, "r01", "g", "q2"))
	putCell(t, r, "r03", "g", "q", "new")
	crashed := crashCopy(t, r)
	r2, err := Open(crashed, Options{})
	require.NoError(t, err)
	require.Nil(t, getValue(t, r2, "r01", "g", "q2"))
	require.Equal(t, "new", string(getValue(t, r2, "r03", "g", "q")))
	require.NoError(t, r2.Close())
	require.NoError(t, r.Close())
}

// TestDeleteFamilyCrashBeforeRemoval: a crash after .regioninfo dropped the
// family but before its directory went leaves the directory; it is never
// read, and a family added again under its name starts empty.
func TestDeleteFamilyCrashBeforeRemoval(t *testing.T) {
	dir := t.TempDir()
	r := openTest(t, dir, nil)
	putCell(t, r, "r1", "g", "q", "old")
	require.NoError(t, r.Flush())
	putCell(t, r, "r2", "g", "q", "old-in-wal")
	// DeleteFamily's first step, then the crash.
	require.NoError(t, r.writeDescriptor(r.storeSet().without("g")))
	abandon(r)
	require.DirExists(t, filepath.Join(dir, "g"))

	r2, err := Open(dir, Options{})
	require.NoError(t, err)
	require.Equal(t, []string{"f"}, familyNames(r2))
	require.NoError(t, r2.AddFamily(FamilyOptions{Name: "g"}))
	require.Nil(t, getValue(t, r2, "r1", "g", "q"))
	require.Nil(t, getValue(t, r2, "r2", "g", "q"))
	require.NoError(t, r2.Close())

	// The same through the options of a reopen.
	dir = t.TempDir()
	r = openTest(t, dir, nil)
	putCell(t, r, "r1", "g", "q", "old")
	require.NoError(t, r.Flush())
	putCell(t, r, "r2", "g", "q", "old-in-wal")
	require.NoError(t, r.writeDescriptor(r.storeSet().without("g")))
	abandon(r)
	r3 := openTest(t, dir, nil)
	require.Equal(t, []string{"f", "g"}, familyNames(r3))
	require.Nil(t, getValue(t, r3, "r1", "g", "q"))
	require.Nil(t, getValue(t, r3, "r2", "g", "q"))
	require.NoError(t, r3.Close())
}

func TestModifyFamily(t *testing.T) {
	dir := t.TempDir()
	now := time.UnixMilli(1_000_000_000)
	clock := func() time.Time { return now }
	r := openTest(t, dir, func(o *Options) { o.Now = clock; o.DisableAutoCompaction = true })
	for ts := int64(1); ts <= 3; ts++ {
		require.NoError(t, r.Put(NewPut(b("r")).AddAt(fam, b("q"), now.UnixMilli()-ts*1000, []byte{'0' + byte(ts)})))
	}
	versions := func() int {
		res, err := r.Get(&Get{Row: b("r"), MaxVersions: 10})
		require.NoError(t, err)
		return len(res.Cells)
	}
	require.Equal(t, 3, versions())
	require.NoError(t, r.Flush())
	old := r.Store("f").Files()
	require.Len(t, old, 1)
	require.Equal(t, EncodingNone, old[0].Reader.Encoding())

	// VERSIONS and TTL apply to reads at once.
	require.NoError(t, r.ModifyFamily(FamilyOptions{Name: "f", MaxVersions: 2}))
	require.Equal(t, 2, versions())
	require.NoError(t, r.ModifyFamily(FamilyOptions{Name: "f", MaxVersions: 3, TTL: 2500 * time.Millisecond}))
	require.Equal(t, 2, versions(), "the version 3s old has expired")
	// MIN_VERSIONS too: the expired version is kept for reads again.
	require.NoError(t, r.ModifyFamily(FamilyOptions{Name: "f", MaxVersions: 3, MinVersions: 3, TTL: 2500 * time.Millisecond}))
	require.Equal(t, 3, versions(), "MIN_VERSIONS=3 keeps the expired version")

	// Block options apply to the files written from now on.
	fo := FamilyOptions{Name: "f", MaxVersions: 3, MinVersions: 1, Encoding: EncodingFastDiff, Compression: CompressionGZ,
		BloomFilter: BloomFilterRowCol, BlockSize: 16 << 10}
	require.NoError(t, r.ModifyFamily(fo))
	require.Equal(t, EncodingNone, old[0].Reader.Encoding(), "an existing file changed")
	putCell(t, r, "r2", "f", "q", "x")
	require.NoError(t, r.Flush())
	files := r.Store("f").Files()
	require.Len(t, files, 2)
	nf := files[1]
	require.Equal(t, EncodingFastDiff, nf.Reader.Encoding())
	require.Equal(t, hfile.CompressionGZ, nf.Reader.Trailer().CompressionCodec)
	require.Equal(t, hfile.BloomRowCol, nf.Reader.BloomType())
	// A major compaction rewrites the old file with them too.
	require.NoError(t, r.Compact(true))
	files = r.Store("f").Files()
	require.Len(t, files, 1)
	require.Equal(t, EncodingFastDiff, files[0].Reader.Encoding())
	require.Equal(t, "x", string(getValue(t, r, "r2", "f", "q")))

	require.ErrorIs(t, r.ModifyFamily(FamilyOptions{Name: "nope"}), ErrNoSuchFamily)
	requireInvalid(t, r.ModifyFamily(FamilyOptions{Name: "f", Compression: hfile.CompressionLZO}))

	// The options survive a crash and a reopen that leaves Families empty.
	crashed := crashCopy(t, r)
	r2, err := Open(crashed, Options{Now: clock})
	require.NoError(t, err)
	got := r2.Store("f").Options()
	require.Equal(t, fo.withDefaults(), got)
	require.Equal(t, 1, got.MinVersions)
	require.NoError(t, r2.Close())
	require.NoError(t, r.Close())
}

func TestFamilyChangesAfterClose(t *testing.T) {
	r := openTest(t, t.TempDir(), nil)
	require.NoError(t, r.Close())
	require.ErrorIs(t, r.AddFamily(FamilyOptions{Name: "h"}), ErrClosed)
	require.ErrorIs(t, r.DeleteFamily("g"), ErrClosed)
	require.ErrorIs(t, r.ModifyFamily(FamilyOptions{Name: "g"}), ErrClosed)
	require.ErrorIs(t, r.RollWAL(), ErrClosed)
}

func TestRollWAL(t *testing.T) {
	dir := t.TempDir()
	r := openTest(t, dir, nil)
	putCell(t, r, "r1", "f", "q", "a")
	segs := len(r.wal.Segments())
	require.NoError(t, r.RollWAL())
	require.Equal(t, segs+1, len(r.wal.Segments()))
	putCell(t, r, "r2", "f", "q", "b")
	r2, err := Open(crashCopy(t, r), Options{})
	require.NoError(t, err)
	require.Equal(t, "a", string(getValue(t, r2, "r1", "f", "q")))
	require.Equal(t, "b", string(getValue(t, r2, "r2", "f", "q")))
	require.NoError(t, r2.Close())
	require.NoError(t, r.Close())
}

// TestFamilyChangesConcurrent adds, modifies and deletes a family over and
// over while writers, readers, scanners, flushes and compactions run on
// every family (run it with -race). The stable family's data must be whole
// at the end; the churning family's writes either succeed or fail with
// ErrNoSuchFamily, never anything else, and a reopen finds the region as
// the last change left it.
func TestFamilyChangesConcurrent(t *testing.T) {
	dir := t.TempDir()
	r := openTest(t, dir, func(o *Options) { o.FlushSize = 64 << 10; o.CompactionMin = 2 })
	const churn = "c"
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var writes, churnWrites atomic.Int64
	fail := make(chan error, 16)
	report := func(err error) {
		select {
		case fail <- err:
		default:
		}
	}
	ok := func(err error) bool { return err == nil || errors.Is(err, ErrNoSuchFamily) }
	for w := 0; w < 3; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				row := b(fmt.Sprintf("w%d-%05d", w, i))
				if err := r.Put(NewPut(row).Add(fam, b("q"), row)); err != nil {
					report(err)
					return
				}
				writes.Add(1)
				err := r.Put(NewPut(row).Add(b(churn), b("q"), row).Add(fam2, b("q"), row))
				if !ok(err) {
					report(err)
					return
				}
				if err == nil {
					churnWrites.Add(1)
				}
				if _, err := r.Increment(NewIncrement(b("counter")).Add(b(churn), b("n"), 1)); !ok(err) {
					report(err)
					return
				}
			}
		}(w)
	}
	for rd := 0; rd < 2; rd++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := r.Get(NewGet(b("w0-00001"))); err != nil {
					report(err)
					return
				}
				if _, err := r.Get(NewGet(b("w0-00001")).AddFamily(b(churn))); !ok(err) {
					report(err)
					return
				}
				sc, err := r.NewScanner(&Scan{StartRow: b("w1-"), Limit: 50})
				if err != nil {
					report(err)
					return
				}
				for {
					res, err := sc.Next()
					if err != nil {
						report(err)
						break
					}
					if res == nil {
						break
					}
				}
				sc.Close()
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
			if err := r.Flush(); err != nil {
				report(err)
				return
			}
			if _, err := r.CompactStores(false); err != nil {
				report(err)
				return
			}
		}
	}()
	present := false
	changes := 0
	deadline := time.Now().Add(2 * time.Second)
	if testing.Short() {
		deadline = time.Now().Add(700 * time.Millisecond)
	}
	for time.Now().Before(deadline) {
		var err error
		switch {
		case !present:
			err = r.AddFamily(FamilyOptions{Name: churn, MaxVersions: 1 + changes%3})
			present = err == nil
		case changes%3 == 1:
			err = r.ModifyFamily(FamilyOptions{Name: churn, MaxVersions: 2, Encoding: encoding.EncodingPrefix, Compression: CompressionSnappy})
		default:
			err = r.DeleteFamily(churn)
			present = err != nil
		}
		require.NoError(t, err)
		changes++
		time.Sleep(3 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	select {
	case err := <-fail:
		t.Fatal(err)
	default:
	}
	t.Logf("%d family changes, %d writes, %d to the churning family", changes, writes.Load(), churnWrites.Load())
	require.Positive(t, churnWrites.Load())

	check := func(r *Region) {
		t.Helper()
		var n int64
		sc, err := r.NewScanner(&Scan{Columns: []Column{{Family: fam}}})
		require.NoError(t, err)
		for {
			res, err := sc.Next()
			require.NoError(t, err)
			if res == nil {
				break
			}
			row := res.Cells[0].Row
			require.Equal(t, string(row), string(res.Value(fam, b("q"))))
			n++
		}
		sc.Close()
		require.Equal(t, writes.Load(), n)
		if present {
			require.Contains(t, familyNames(r), churn)
		} else {
			require.NotContains(t, familyNames(r), churn)
		}
	}
	check(r)
	r2, err := Open(crashCopy(t, r), Options{})
	require.NoError(t, err)
	check(r2)
	require.NoError(t, r2.Close())
	require.NoError(t, r.Close())
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		if e.Name() == churn {
			require.True(t, present, "the deleted family's directory is left")
		}
	}
}

// TestCloseDuringCompaction closes a region while a caller's compaction
// runs (the server's CompactRegion does this when a table is disabled):
// Close waits for it, the compaction ends or is refused with ErrClosed,
// and the region reopens whole.
func TestCloseDuringCompaction(t *testing.T) {
	dir := t.TempDir()
	r := openTest(t, dir, func(o *Options) { o.DisableAutoCompaction = true })
	for f := 0; f < 4; f++ {
		for i := 0; i < 200; i++ {
			putCell(t, r, fmt.Sprintf("r%04d", i), "f", "q", fmt.Sprintf("v%d", f))
		}
		require.NoError(t, r.Flush())
	}
	done := make(chan error, 1)
	go func() {
		_, err := r.CompactStores(true)
		done <- err
	}()
	require.NoError(t, r.Close())
	if err := <-done; err != nil {
		require.ErrorIs(t, err, ErrClosed)
	}
	r2 := openTest(t, dir, nil)
	for i := 0; i < 200; i += 37 {
		require.Equal(t, "v3", string(getValue(t, r2, fmt.Sprintf("r%04d", i), "f", "q")))
	}
	require.NoError(t, r2.Close())
}
