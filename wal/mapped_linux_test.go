package wal

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/cockroachdb/errors"
	"golang.org/x/sys/unix"

	"github.com/regionkv/regionkv/internal/vfs"
	"github.com/stretchr/testify/require"
)

// copyDir copies the files of src into a new directory: what a process
// killed at that moment leaves on disk, the page cache included.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	require.NoError(t, os.CopyFS(dst, os.DirFS(src)))
	return dst
}

// TestMappedSegment: on the operating system's filesystem a segment is
// written through a mapping, allocated a chunk ahead; what it holds reads
// back while it is open (the zeros ahead are no torn tail), across chunk
// boundaries, and Close cuts it to exactly the bytes a plain writer writes.
func TestMappedSegment(t *testing.T) {
	mapped, plain := t.TempDir(), t.TempDir()
	wm := openTest(t, mapped, Options{})
	wp := openTest(t, plain, Options{PlainWrites: true})
	_, ok := wm.file.(*mappedFile)
	require.True(t, ok, "segment on the OS filesystem not mapped")
	_, ok = wp.file.(*mappedFile)
	require.False(t, ok, "PlainWrites segment mapped")

	const n = 12000 // entries past the first chunk
	newRegion(wm, 0).mustWrite(t, SyncWAL, n)
	newRegion(wp, 0).mustWrite(t, SyncWAL, n)
	seg := wm.Segments()[0]
	require.Greater(t, seg.Size, int64(mapChunk), "the test must cross a chunk boundary")
	st, err := os.Stat(seg.Path)
	require.NoError(t, err)
	require.Zero(t, st.Size()%mapChunk, "a mapped segment is allocated in chunks")
	require.Greater(t, st.Size(), seg.Size)

	seqs, stats := replaySeqs(t, vfs.Default, mapped, 0)
	require.Equal(t, seqRange(1, n), seqs)
	require.False(t, stats.TornTail)

	// An AsyncWAL round larger than a chunk is one write across several.
	r := newRegion(wm, n)
	r2 := newRegion(wp, n)
	for i := 0; i < n; i++ {
		_, err := r.write(AsyncWAL)
		require.NoError(t, err)
		_, err = r2.write(AsyncWAL)
		require.NoError(t, err)
	}
	require.NoError(t, wm.Close())
	require.NoError(t, wp.Close())
	seqs, stats = replaySeqs(t, vfs.Default, mapped, 0)
	require.Equal(t, seqRange(1, 2*n), seqs)
	require.False(t, stats.TornTail)

	mb, err := os.ReadFile(seg.Path)
	require.NoError(t, err)
	pb, err := os.ReadFile(filepath.Join(plain, filepath.Base(seg.Path)))
	require.NoError(t, err)
	require.True(t, bytes.Equal(mb, pb), "closed mapped segment (%d bytes) differs from the plain one (%d bytes)", len(mb), len(pb))
}

// TestMappedSegmentKilled: a writer that stops without Close (a killed
// process) leaves its segment ending in zeros up to a chunk boundary. Open
// recovers every written entry, cuts the zeros without calling them torn,
// and the log reads clean once a segment follows.
func TestMappedSegmentKilled(t *testing.T) {
	dir := t.TempDir()
	w := openTest(t, dir, Options{})
	newRegion(w, 0).mustWrite(t, SyncWAL, 500)
	size := w.Segments()[0].Size
	killed := copyDir(t, dir)
	require.NoError(t, w.Close())

	seqs, stats := replaySeqs(t, vfs.Default, killed, 0)
	require.Equal(t, seqRange(1, 500), seqs)
	require.False(t, stats.TornTail)

	w2 := openTest(t, killed, Options{})
	segs := w2.Segments()
	require.Len(t, segs, 2)
	st, err := os.Stat(segs[0].Path)
	require.NoError(t, err)
	require.Equal(t, size, st.Size(), "the zeros ahead are cut")
	newRegion(w2, 500).mustWrite(t, SyncWAL, 10)
	require.NoError(t, w2.Close())
	seqs, stats = replaySeqs(t, vfs.Default, killed, 0)
	require.Equal(t, seqRange(1, 510), seqs)
	require.False(t, stats.TornTail)
}

// TestZerosInEarlierSegment: zeros ending a segment that another follows
// are corruption, as any damage there is: Close cuts a mapped segment
// durably before the next one starts, so no intact log has them.
func TestZerosInEarlierSegment(t *testing.T) {
	dir := t.TempDir()
	w := openTest(t, dir, Options{})
	newRegion(w, 0).mustWrite(t, SyncWAL, 20)
	killed := copyDir(t, dir)
	require.NoError(t, w.Close())
	// A second segment after the uncut first one.
	w2 := openTest(t, dir, Options{})
	newRegion(w2, 20).mustWrite(t, SyncWAL, 5)
	require.NoError(t, w2.Close())
	segs, err := ListSegments(vfs.Default, dir)
	require.NoError(t, err)
	require.Len(t, segs, 2)
	first, err := os.ReadFile(filepath.Join(killed, filepath.Base(segs[0])))
	require.NoError(t, err)
	require.Zero(t, len(first)%mapChunk)
	require.NoError(t, os.WriteFile(segs[0], first, 0o644))
	_, err = Replay(dir, 0, func(*Key, *Edit) error { return nil })
	require.Error(t, err)
	require.Contains(t, err.Error(), "not the last")
}

// TestMappedChunkAhead: while a chunk is written, the one after it is
// allocated, mapped and faulted in ahead, so that the file is two chunks
// long after a first small write; the writer moves into it across the
// boundary, and the log reads back whole.
func TestMappedChunkAhead(t *testing.T) {
	dir := t.TempDir()
	w := openTest(t, dir, Options{})
	newRegion(w, 0).mustWrite(t, SyncWAL, 10)
	m, ok := w.file.(*mappedFile)
	require.True(t, ok)
	w.mu.Lock() // no round may run while the test holds the chunk
	r := <-m.ahead
	require.NoError(t, r.err)
	require.NoError(t, r.unmapErr)
	require.Len(t, r.m, mapChunk)
	if populateWriteSupported(t) {
		vec := make([]byte, mapChunk/os.Getpagesize())
		_, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&r.m[0])), uintptr(len(r.m)), uintptr(unsafe.Pointer(&vec[0])))
		require.Zero(t, errno, "mincore")
		for i, v := range vec {
			require.NotZero(t, v&1, "page %d of the chunk ahead is not resident", i)
		}
	}
	m.ahead <- r
	w.mu.Unlock()
	st, err := os.Stat(w.Segments()[0].Path)
	require.NoError(t, err)
	require.EqualValues(t, 2*mapChunk, st.Size())

	const n = 20000 // past two chunk boundaries
	newRegion(w, 10).mustWrite(t, SyncWAL, n)
	require.Greater(t, w.Segments()[0].Size, int64(2*mapChunk))
	require.NoError(t, w.Close())
	seqs, stats := replaySeqs(t, vfs.Default, dir, 0)
	require.Equal(t, seqRange(1, n+10), seqs)
	require.False(t, stats.TornTail)
}

// populateWriteSupported reports whether this kernel knows
// MADV_POPULATE_WRITE (Linux 5.14): without it pages of the chunk ahead
// fault in on first store, as before.
func populateWriteSupported(t *testing.T) bool {
	b, err := unix.Mmap(-1, 0, os.Getpagesize(), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_ANONYMOUS)
	require.NoError(t, err)
	defer unix.Munmap(b)
	if err := unix.Madvise(b, unix.MADV_POPULATE_WRITE); err != nil {
		t.Logf("MADV_POPULATE_WRITE: %v; not checking residency", err)
		return false
	}
	return true
}

// TestMappedChunkAheadFails: a chunk that cannot be allocated ahead (a
// full disk) is tried again when the writer reaches it, and the failure is
// the write's error, not a fault; what was written before stays readable.
func TestMappedChunkAheadFails(t *testing.T) {
	defer func(f func(int, int64) ([]byte, error)) { chunkMapper = f }(chunkMapper)
	var tries atomic.Int32
	chunkMapper = func(fd int, off int64) ([]byte, error) {
		if off >= mapChunk {
			tries.Add(1)
			return nil, errors.Wrapf(unix.ENOSPC, "fallocate %d bytes at offset %d", mapChunk, off)
		}
		return mapChunkAt(fd, off)
	}
	dir := t.TempDir()
	w := openTest(t, dir, Options{})
	r := newRegion(w, 0)
	var written uint64
	var err error
	for i := 0; i < 20000 && err == nil; i++ {
		var seq uint64
		if seq, err = r.write(SyncWAL); err == nil {
			written = seq
		}
	}
	require.Error(t, err, "the writes never crossed the first chunk")
	require.ErrorIs(t, err, unix.ENOSPC)
	require.EqualValues(t, 2, tries.Load(), "made ahead, then tried again at the boundary")
	require.Error(t, w.Close())
	seqs, _ := replaySeqs(t, vfs.Default, dir, 0)
	require.Equal(t, seqRange(1, written), seqs)
}

// TestMappedWriteBackAhead: once a mapped segment has grown well past its
// last fsync, a round starts its writeback (sync_file_range), so that the
// roll's fsync finds little left; synced does not move for it, and the log
// reads back whole.
func TestMappedWriteBackAhead(t *testing.T) {
	dir := t.TempDir()
	w := openTest(t, dir, Options{RollSize: 8 << 20}) // write back every MiB
	r := newRegion(w, 0)
	n := 0
	for w.Segments()[0].Size < 3<<20 {
		r.mustWrite(t, SyncWAL, 1000)
		n += 1000
	}
	require.Eventually(t, func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.mu.syncedSize >= 1<<20 && !w.mu.syncing
	}, 10*time.Second, time.Millisecond, "no writeback ahead")
	w.mu.Lock()
	require.Zero(t, w.mu.synced, "a writeback is no fsync")
	require.Zero(t, w.mu.syncedSize%4096)
	w.mu.Unlock()
	require.NoError(t, w.Roll())
	w.mu.Lock()
	require.Zero(t, w.mu.syncedSize, "a new segment starts unsynced")
	w.mu.Unlock()
	require.NoError(t, w.Close())
	seqs, stats := replaySeqs(t, vfs.Default, dir, 0)
	require.Equal(t, seqRange(1, uint64(n)), seqs)
	require.False(t, stats.TornTail)
}

// TestWriteBackBesideWriters: the writeback of a mapped segment runs in the
// flush goroutine with the file free. While it is in progress (held here in
// writeBackHook), SyncWAL entries are still framed straight into the
// mapping and their Syncs return; a roll asked for meanwhile waits for it,
// then happens; the log reads back whole.
func TestWriteBackBesideWriters(t *testing.T) {
	dir := t.TempDir()
	started, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	writeBackHook = func() {
		once.Do(func() {
			close(started)
			<-release
		})
	}
	defer func() { writeBackHook = nil }()
	w := openTest(t, dir, Options{RollSize: 8 << 20, AsyncFlushInterval: time.Hour}) // write back every MiB
	k, e := preparedEdit(3)
	var p PreparedEntry
	seq := uint64(0)
	appendOne := func() {
		t.Helper()
		seq++
		k.SeqNum = seq
		require.NoError(t, p.Prepare(k, e))
		txid, err := w.AppendPrepared(&p, seq)
		require.NoError(t, err)
		require.NoError(t, w.Sync(txid, SyncWAL))
	}
	deadline := time.After(30 * time.Second)
	for held := false; !held; {
		appendOne()
		select {
		case <-started:
			held = true
		case <-deadline:
			t.Fatal("no writeback started")
		default:
		}
	}
	w.mu.Lock()
	require.True(t, w.mu.syncing, "the writeback holds off fsyncs and rolls")
	require.False(t, w.mu.busy, "the writeback leaves the file free")
	w.mu.Unlock()
	before := w.Metrics()
	for i := 0; i < 1000; i++ {
		appendOne()
	}
	after := w.Metrics()
	require.Equal(t, before.Appends+1000, after.Appends)
	require.Equal(t, before.Writes+1000, after.Writes, "each entry written by its own append, no round")
	seqs, _ := loggedSeqs(t, dir)
	require.Equal(t, seqRange(1, seq), seqs, "every entry is in the file while the writeback is held")

	rolled := make(chan error, 1)
	go func() { rolled <- w.Roll() }()
	select {
	case err := <-rolled:
		t.Fatalf("a roll ran during the writeback: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	select {
	case err := <-rolled:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("the roll never ran after the writeback")
	}
	w.mu.Lock()
	require.Zero(t, w.mu.syncedSize, "a new segment starts unsynced")
	w.mu.Unlock()
	require.Len(t, w.Segments(), 2)
	appendOne()
	require.NoError(t, w.Close())
	seqs, stats := loggedSeqs(t, dir)
	require.Equal(t, seqRange(1, seq), seqs)
	require.False(t, stats.TornTail)
}

// TestPlainSegmentNoWriteBack: a segment written with write(2) is not
// written back ahead, and its growth does not keep asking the flush
// goroutine to.
func TestPlainSegmentNoWriteBack(t *testing.T) {
	dir := t.TempDir()
	w := openTest(t, dir, Options{RollSize: 8 << 20, PlainWrites: true})
	r := newRegion(w, 0)
	n := 0
	for w.Segments()[0].Size < 3<<20 {
		r.mustWrite(t, SyncWAL, 1000)
		n += 1000
	}
	w.mu.Lock()
	require.False(t, w.mu.writeBackDue)
	require.Zero(t, w.mu.syncedSize)
	w.mu.Unlock()
	require.NoError(t, w.Close())
	seqs, _ := replaySeqs(t, vfs.Default, dir, 0)
	require.Equal(t, seqRange(1, uint64(n)), seqs)
}

// TestDirectAppend: on a mapped segment, AppendPrepared writes a record
// straight into the mapping when the file is free and nothing is pending,
// so the entry is in the file (a reader sees it) before Sync, and Sync
// with SyncWAL returns without a round. A record whose sequence id
// changes its length goes through pending and a round, and so does every
// record while something is pending; the log holds them all, in order.
func TestDirectAppend(t *testing.T) {
	dir := t.TempDir()
	w := openTest(t, dir, Options{AsyncFlushInterval: time.Hour})
	k, e := preparedEdit(3)
	var p PreparedEntry

	appendSeq := func(prepared, seq uint64) uint64 {
		t.Helper()
		k.SeqNum = prepared
		require.NoError(t, p.Prepare(k, e))
		txid, err := w.AppendPrepared(&p, seq)
		require.NoError(t, err)
		return txid
	}
	// The segment's header was one write.
	base := w.Metrics()
	writes := func() uint64 { return w.Metrics().Writes - base.Writes }
	// Written by the append itself: one write, visible before any Sync.
	txid := appendSeq(1, 1)
	m := w.Metrics()
	require.Equal(t, uint64(1), m.Appends)
	require.Equal(t, uint64(1), writes())
	require.Equal(t, uint64(p.Size()), m.BytesWritten-base.BytesWritten)
	seqs, _ := loggedSeqs(t, dir)
	require.Equal(t, []uint64{1}, seqs)
	require.NoError(t, w.Sync(txid, SyncWAL))
	require.Equal(t, uint64(1), writes(), "a written entry's Sync leads no round")

	// Prepared with a one-byte sequence id, appended with a two-byte one:
	// re-framed into pending, written by Sync's round.
	txid = appendSeq(2, 200)
	require.Equal(t, uint64(1), writes())
	seqs, _ = loggedSeqs(t, dir)
	require.Equal(t, []uint64{1}, seqs, "a pending entry is not in the file before its round")
	// While it is pending, the next one queues behind it.
	txid2 := appendSeq(201, 201)
	require.Equal(t, uint64(1), writes())
	require.NoError(t, w.Sync(txid2, SyncWAL))
	require.NoError(t, w.Sync(txid, SyncWAL))
	require.Equal(t, uint64(2), writes(), "one round wrote both")
	// Nothing pending again: direct.
	appendSeq(202, 202)
	require.Equal(t, uint64(3), writes())

	// FSyncWAL of a directly written entry fsyncs it.
	txid = appendSeq(203, 203)
	require.NoError(t, w.Sync(txid, FSyncWAL))
	require.Equal(t, base.Syncs+1, w.Metrics().Syncs)

	require.NoError(t, w.Close())
	seqs, stats := loggedSeqs(t, dir)
	require.Equal(t, []uint64{1, 200, 201, 202, 203}, seqs)
	require.False(t, stats.TornTail)
}

// TestWarm: warm loads the first byte of every cache line of the chunk,
// the last one partial, and no other byte.
func TestWarm(t *testing.T) {
	b := make([]byte, 100*cacheLine+10)
	for i := range b {
		b[i] = 3
	}
	for i := 0; i < len(b); i += cacheLine {
		b[i] = 1
	}
	require.Equal(t, byte(101), warm(b))
	require.Zero(t, warm(nil))
}

// TestMappedWriteAfterClose: a write to a closed mapped segment fails. It
// must not reach the file opened next, which most often gets the closed
// descriptor's number: mapping a chunk through that number would write
// into another segment.
func TestMappedWriteAfterClose(t *testing.T) {
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "a"))
	require.NoError(t, err)
	hdr := appendSegmentHeader(nil)
	_, err = f.Write(hdr)
	require.NoError(t, err)
	m, ok := mapSegment(f, int64(len(hdr))).(*mappedFile)
	require.True(t, ok)
	fd := m.fd
	_, err = m.Write([]byte("an entry"))
	require.NoError(t, err)
	require.NoError(t, m.Close())

	g, err := os.Create(filepath.Join(dir, "b"))
	require.NoError(t, err)
	defer g.Close()
	if int(g.Fd()) != fd {
		t.Logf("the next file got descriptor %d, not the closed %d", g.Fd(), fd)
	}
	_, err = m.Write([]byte("a stray entry"))
	require.Error(t, err)
	st, err := g.Stat()
	require.NoError(t, err)
	require.Zero(t, st.Size(), "the write after Close reached the next file")
}

// TestOrderedCopyFault interrupts copies into memory the way a kill during
// a page fault does: the page after the first is inaccessible, so the copy
// faults there, and what it stored before is what a process killed at that
// moment leaves in a mapped segment. orderedCopy must leave a prefix of
// what it copied: a record written out of turn, past one not yet written,
// is what the reader calls corruption.
func TestOrderedCopyFault(t *testing.T) {
	page := os.Getpagesize()
	mem, err := unix.Mmap(-1, 0, 2*page, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	require.NoError(t, err)
	defer unix.Munmap(mem)
	require.NoError(t, unix.Mprotect(mem[page:], unix.PROT_NONE))

	// faultingCopy runs f until it faults, as it must, on the second page.
	faultingCopy := func(f func(dst, src []byte) int, dst, src []byte) {
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		defer func() {
			_, fault := recover().(interface{ Addr() uintptr })
			require.True(t, fault, "no fault")
		}()
		f(dst, src)
	}
	// prefix reports how much of src dst holds before the fault, and
	// whether dst holds nothing else there: a prefix, then zeros.
	prefix := func(dst, src []byte) (int, bool) {
		i := 0
		for i < len(dst) && dst[i] == src[i] {
			i++
		}
		return i, allZero(dst[i:])
	}
	src := make([]byte, 3*page)
	for i := range src {
		src[i] = byte(1 + i%251) // never zero
	}
	for _, before := range []int{20, 100, 255, 256, 257, 300, 1000, 2047, 2049, 3000, page - 32} {
		for _, align := range []int{0, 1, 7, 31} {
			start := page - before
			n := before + 200 + align // runs past the first page
			clear(mem[:page])
			faultingCopy(orderedCopy, mem[start-align:start-align+n], src[:n])
			got, ok := prefix(mem[start-align:page], src)
			require.True(t, ok, "orderedCopy of %d bytes, %d before the fault: bytes stored after %d it had not stored", n, before+align, got)
			// It gets at least to the last whole store before the page.
			require.GreaterOrEqual(t, got, before+align-32, "orderedCopy of %d bytes stopped early", n)

			clear(mem[:page])
			faultingCopy(func(dst, src []byte) int { return copy(dst, src) }, mem[start-align:start-align+n], src[:n])
			if got, ok := prefix(mem[start-align:page], src); !ok {
				t.Logf("copy of %d bytes, %d before the fault, left bytes after the first %d it had not stored", n, before+align, got)
			}
		}
	}
}
