package wal

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

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
