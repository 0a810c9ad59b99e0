package wal

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/internal/record"
	"github.com/regionkv/regionkv/internal/vfs"
	"github.com/stretchr/testify/require"
)

// writeLog writes entries 1..n into one segment and returns its bytes and
// the offset of each record, plus the end offset.
func writeLog(t *testing.T, n int) (data []byte, recordOffsets []int64) {
	t.Helper()
	dir := t.TempDir()
	w := openTest(t, dir, Options{})
	newRegion(w, 0).mustWrite(t, SyncWAL, n)
	require.NoError(t, w.Close())
	data, err := os.ReadFile(filepath.Join(dir, SegmentName(1)))
	require.NoError(t, err)
	off := int64(len(appendSegmentHeader(nil)))
	for off < int64(len(data)) {
		recordOffsets = append(recordOffsets, off)
		_, size, err := record.Decode(data[off:])
		require.NoError(t, err)
		off += int64(size)
	}
	require.Len(t, recordOffsets, n)
	return data, append(recordOffsets, off)
}

// writeSegments writes the given segment contents, numbered from 1, into a
// new directory.
func writeSegments(t *testing.T, segs ...[]byte) string {
	t.Helper()
	dir := t.TempDir()
	rewriteSegments(t, dir, segs...)
	return dir
}

// rewriteSegments replaces the segments in dir with segs.
func rewriteSegments(t *testing.T, dir string, segs ...[]byte) {
	t.Helper()
	old, err := ListSegments(vfs.Default, dir)
	require.NoError(t, err)
	for _, p := range old {
		require.NoError(t, os.Remove(p))
	}
	for i, b := range segs {
		require.NoError(t, os.WriteFile(filepath.Join(dir, SegmentName(uint64(i+1))), b, 0o644))
	}
}

// TestTornTailEveryOffset cuts a log at every byte offset: replay returns the
// entries wholly before the cut and reports the rest as a torn tail, never
// an error. Open repairs the cut log so that it reads cleanly once newer
// segments follow.
func TestTornTailEveryOffset(t *testing.T) {
	data, offs := writeLog(t, 4)
	hdrEnd := offs[0]
	scratch := t.TempDir()
	for cut := int64(0); cut <= int64(len(data)); cut++ {
		// Alone, and as the last of two segments.
		for _, first := range [][]byte{nil, data} {
			segs := [][]byte{data[:cut]}
			if first != nil {
				segs = [][]byte{first, data[:cut]}
			}
			dir := scratch
			rewriteSegments(t, dir, segs...)
			var seqs []uint64
			stats, err := Replay(dir, 0, func(k *Key, e *Edit) error {
				checkEntry(t, k, e)
				seqs = append(seqs, k.SeqNum)
				return nil
			})
			require.NoError(t, err, "cut at %d", cut)
			whole := 0
			for whole < 4 && offs[whole+1] <= cut {
				whole++
			}
			want := seqRange(1, uint64(whole))
			if first != nil {
				want = append(seqRange(1, 4), want...)
			}
			require.Equal(t, want, seqs, "cut at %d", cut)
			var tornAt int64
			switch {
			case cut == 0 || cut == hdrEnd || cut == offs[whole]:
				tornAt = -1 // on a boundary: nothing torn
			case cut < magicSize:
				tornAt = 0
			case cut < hdrEnd:
				tornAt = magicSize
			default:
				tornAt = offs[whole]
			}
			if tornAt < 0 {
				require.False(t, stats.TornTail, "cut at %d", cut)
				continue
			}
			require.True(t, stats.TornTail, "cut at %d", cut)
			require.Equal(t, tornAt, stats.TornOffset, "cut at %d", cut)
			require.Equal(t, cut-tornAt, stats.DroppedBytes, "cut at %d", cut)
			require.Equal(t, filepath.Join(dir, SegmentName(uint64(len(segs)))), stats.TornSegment)

			if cut%25 != 7 {
				continue // Open fsyncs; keep the test quick
			}
			dir = writeSegments(t, segs...)
			w := openTest(t, dir, Options{})
			newRegion(w, 100).mustWrite(t, SyncWAL, 1)
			require.NoError(t, w.Close())
			seqs2, stats2 := replaySeqs(t, vfs.Default, dir, 0)
			require.Equal(t, append(want, 101), seqs2, "cut at %d", cut)
			require.False(t, stats2.TornTail)
		}
	}
}

// TestGarbageTail appends zeros or random bytes to an intact log: a torn
// tail, all dropped, nothing lost.
func TestGarbageTail(t *testing.T) {
	data, _ := writeLog(t, 5)
	rng := rand.New(rand.NewPCG(7, 7))
	for _, n := range []int{1, 7, 8, 9, 100, 4096, 70000} {
		for _, kind := range []string{"zeros", "random", "ones"} {
			tail := make([]byte, n)
			for i := range tail {
				switch kind {
				case "random":
					tail[i] = byte(rng.Uint32())
				case "ones":
					tail[i] = 0xff
				}
			}
			dir := writeSegments(t, append(bytes.Clone(data), tail...))
			seqs, stats := replaySeqs(t, vfs.Default, dir, 0)
			require.Equal(t, seqRange(1, 5), seqs, "%d %s", n, kind)
			require.True(t, stats.TornTail)
			require.Equal(t, int64(len(data)), stats.TornOffset)
			require.Equal(t, int64(n), stats.DroppedBytes)
		}
	}
	// A whole segment of zeros (extended, never written) is torn too.
	dir := writeSegments(t, data, make([]byte, 4096))
	seqs, stats := replaySeqs(t, vfs.Default, dir, 0)
	require.Equal(t, seqRange(1, 5), seqs)
	require.True(t, stats.TornTail)
	require.Equal(t, int64(0), stats.TornOffset)
}

// TestMidLogCorruption flips each byte of every record but the last: always
// an error marked as corruption naming the file and the record's offset.
// The same flip in the last record is a torn tail.
func TestMidLogCorruption(t *testing.T) {
	data, offs := writeLog(t, 4)
	dir := t.TempDir()
	for pos := int64(0); pos < int64(len(data)); pos++ {
		b := bytes.Clone(data)
		b[pos] ^= 0x41
		rewriteSegments(t, dir, b)
		path := filepath.Join(dir, SegmentName(1))
		stats, err := Replay(dir, 0, func(*Key, *Edit) error { return nil })
		switch {
		case pos < magicSize:
			require.Error(t, err, "flip at %d", pos)
			require.Contains(t, err.Error(), path)
		case pos < offs[3]:
			require.Error(t, err, "flip at %d", pos)
			require.True(t, encoding.IsCorruption(err), "flip at %d: %v", pos, err)
			rec := magicSize
			for _, o := range offs[:4] {
				if o <= pos {
					rec = int(o)
				}
			}
			require.Contains(t, err.Error(), fmt.Sprintf("%s: corrupt record at offset %d,", path, rec))
			// What follows the damage, and what the damage is.
			require.Regexp(t, `\(an entry of region "[^"]+", sequence id \d+\); the \d+ bytes before it begin [0-9a-f]+`, err.Error())
		default:
			require.NoError(t, err, "flip at %d", pos)
			require.True(t, stats.TornTail)
			require.Equal(t, offs[3], stats.TornOffset)
			require.Equal(t, 3, stats.Applied)
		}
	}

	// A record never written (zeros) before an intact one, as a stray
	// write past the end of what was written would leave.
	b := bytes.Clone(data)
	clear(b[offs[1]:offs[2]])
	rewriteSegments(t, dir, b)
	_, err := Replay(dir, 0, func(*Key, *Edit) error { return nil })
	require.True(t, encoding.IsCorruption(err), "%v", err)
	k, _ := testEdit(3)
	require.Contains(t, err.Error(), fmt.Sprintf("corrupt record at offset %d, followed by an intact record at offset %d "+
		"(an entry of region %q, sequence id 3); the %d bytes before it are all zeros",
		offs[1], offs[2], k.EncodedRegionName, offs[2]-offs[1]), "%v", err)

	// In a segment that is not the last, any bad record is corruption, a
	// cut last record included.
	for _, b := range [][]byte{data[:len(data)-1], append(bytes.Clone(data), 0, 0, 0)} {
		dir := writeSegments(t, b, data)
		_, err := Replay(dir, 0, func(*Key, *Edit) error { return nil })
		require.True(t, encoding.IsCorruption(err), "%v", err)
		require.Contains(t, err.Error(), filepath.Join(dir, SegmentName(1)))
		require.Contains(t, err.Error(), "not the last")
		// And Open refuses it.
		_, err = Open(dir, Options{})
		require.True(t, encoding.IsCorruption(err), "%v", err)
	}
}

func TestSegmentHeaders(t *testing.T) {
	data, offs := writeLog(t, 2)
	hdr := data[:offs[0]]

	// Empty last segment: nothing to read, nothing torn. Header only: the
	// same. Empty segment before another: corruption.
	for _, segs := range [][][]byte{{data, nil}, {data, hdr}} {
		seqs, stats := replaySeqs(t, vfs.Default, writeSegments(t, segs...), 0)
		require.Equal(t, seqRange(1, 2), seqs)
		require.False(t, stats.TornTail)
	}
	_, err := Replay(writeSegments(t, nil, data), 0, func(*Key, *Edit) error { return nil })
	require.True(t, encoding.IsCorruption(err), "%v", err)

	// A header torn by a power loss: its first bytes, then zeros where
	// the rest was not written (as TestPowerLoss found: "R\x00\x00...",
	// the magic with a zeroed version). In the last segment it is a torn
	// tail; before another segment, corruption.
	for cut := 0; cut < len(hdr); cut++ {
		torn := append(bytes.Clone(hdr[:cut]), make([]byte, len(hdr)-cut)...)
		if bytes.Equal(torn, hdr) {
			continue // the header ends in zeros
		}
		seqs, stats := replaySeqs(t, vfs.Default, writeSegments(t, data, torn), 0)
		require.Equal(t, seqRange(1, 2), seqs, "cut at %d", cut)
		require.True(t, stats.TornTail, "cut at %d", cut)
		_, err := Replay(writeSegments(t, torn, data), 0, func(*Key, *Edit) error { return nil })
		require.True(t, encoding.IsCorruption(err), "cut at %d: %v", cut, err)
	}

	// Not a WAL file.
	_, err = Replay(writeSegments(t, []byte("PWAL\x00\x00\x00\x01 something else")), 0, func(*Key, *Edit) error { return nil })
	require.True(t, encoding.IsCorruption(err), "%v", err)
	require.Contains(t, err.Error(), "not a WAL segment")

	// A compressed segment is well-formed but unsupported.
	compressed := []byte(segmentMagic + "\x00\x00\x00\x01")
	compressed, err = record.Append(compressed, []byte{0x08, 0x01}) // has_compression = true
	require.NoError(t, err)
	_, err = Replay(writeSegments(t, append(compressed, data[offs[0]:]...)), 0, func(*Key, *Edit) error { return nil })
	require.True(t, errors.Is(err, ErrUnsupported), "%v", err)
	require.False(t, encoding.IsCorruption(err))

	// An intact frame around an entry that does not decode is corruption,
	// even at the end of the last segment.
	bad, err := record.Append(bytes.Clone(data), []byte{3, 0x0a, 1, 'r'})
	require.NoError(t, err)
	_, err = Replay(writeSegments(t, bad), 0, func(*Key, *Edit) error { return nil })
	require.True(t, encoding.IsCorruption(err), "%v", err)
	require.Contains(t, err.Error(), fmt.Sprintf("entry at offset %d", len(data)))

	// Files that are not segments are ignored.
	dir := writeSegments(t, data)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "1.wal"), []byte("x"), 0o644))
	seqs, _ := replaySeqs(t, vfs.Default, dir, 0)
	require.Equal(t, seqRange(1, 2), seqs)
}

// TestOpenRepairsTornTail: a log with a garbage tail, reopened and written
// to, reads back whole; the torn segment is truncated, a segment with a torn
// header removed.
func TestOpenRepairsTornTail(t *testing.T) {
	data, _ := writeLog(t, 3)

	// A garbage tail is truncated away.
	dir := writeSegments(t, append(bytes.Clone(data), 1, 2, 3, 4, 5, 6, 7, 8, 9))
	w := openTest(t, dir, Options{})
	segs := w.Segments()
	require.Len(t, segs, 2)
	require.Equal(t, SegmentName(2), filepath.Base(segs[1].Path))
	require.Equal(t, uint64(3), segs[0].MaxSeq)
	require.Equal(t, int64(len(data)), segs[0].Size)
	st, err := os.Stat(segs[0].Path)
	require.NoError(t, err)
	require.Equal(t, int64(len(data)), st.Size())
	newRegion(w, 3).mustWrite(t, SyncWAL, 2)
	require.NoError(t, w.Close())
	seqs, stats := replaySeqs(t, vfs.Default, dir, 0)
	require.Equal(t, seqRange(1, 5), seqs)
	require.False(t, stats.TornTail)

	// A segment with a torn header (the crash came while it was being
	// created) is removed.
	dir = writeSegments(t, data, data[:5])
	w = openTest(t, dir, Options{})
	segs = w.Segments()
	require.Len(t, segs, 2)
	require.Equal(t, SegmentName(3), filepath.Base(segs[1].Path))
	_, err = os.Stat(filepath.Join(dir, SegmentName(2)))
	require.True(t, os.IsNotExist(err))
	newRegion(w, 3).mustWrite(t, SyncWAL, 2)
	require.NoError(t, w.Close())
	seqs, stats = replaySeqs(t, vfs.Default, dir, 0)
	require.Equal(t, seqRange(1, 5), seqs)
	require.False(t, stats.TornTail)
}

func isUnsupported(err error) bool { return errors.Is(err, ErrUnsupported) }
