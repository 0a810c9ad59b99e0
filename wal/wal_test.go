package wal

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/internal/vfs"
	"github.com/regionkv/regionkv/mvcc"
	"github.com/stretchr/testify/require"
)

// testEdit returns the key and edit of the entry with sequence id seq: its
// contents are a function of seq, so a replayed entry can be checked alone.
func testEdit(seq uint64) (*Key, *Edit) {
	k := &Key{
		EncodedRegionName: []byte("1588230740abcdef"),
		TableName:         []byte("ns:t1"),
		SeqNum:            seq,
		WriteTime:         1700000000000 + int64(seq),
	}
	if seq%7 == 0 {
		k.OrigSeqNum = seq + 1000
	}
	e := &Edit{}
	for i := 0; i < int(seq%4); i++ {
		kv := encoding.KeyValue{
			Row:       []byte(fmt.Sprintf("row-%06d", seq)),
			Family:    []byte("f"),
			Qualifier: []byte(fmt.Sprintf("q%d", i)),
			Timestamp: int64(seq*10 + uint64(i)),
			Type:      encoding.TypePut,
			Value:     bytes.Repeat([]byte{byte(seq), 0, '\n'}, int(seq%5)),
		}
		if i == 2 {
			kv.Type = encoding.TypeDeleteColumn
			kv.Value = nil
			kv.Tags = []byte{0, 3, 1, 'a', 'b'}
		}
		e.Cells = append(e.Cells, kv)
	}
	return k, e
}

// checkEntry checks that a replayed entry is testEdit(k.SeqNum).
func checkEntry(t testing.TB, k *Key, e *Edit) {
	t.Helper()
	checkEntryOf(t, testEdit, k, e)
}

// checkEntryOf checks that a replayed entry is edit(k.SeqNum).
func checkEntryOf(t testing.TB, edit func(seq uint64) (*Key, *Edit), k *Key, e *Edit) {
	t.Helper()
	wk, we := edit(k.SeqNum)
	require.Equal(t, wk, k)
	require.Len(t, e.Cells, len(we.Cells))
	for i := range we.Cells {
		want := we.Cells[i]
		want.SeqNum = encoding.SeqNum(k.SeqNum)
		got := e.Cells[i]
		require.Equal(t, want.String(), got.String())
		require.Equal(t, string(want.Value), string(got.Value))
		require.Equal(t, string(want.Tags), string(got.Tags))
	}
}

// region plays the region's part: mvcc write numbers as sequence ids.
type region struct {
	w  *Writer
	mv *mvcc.Control
}

func newRegion(w *Writer, start uint64) *region { return &region{w: w, mv: mvcc.New(start)} }

// write logs testEdit(seq) with durability d the way the region will, and
// returns seq.
func (r *region) write(d Durability) (uint64, error) { return r.writeWith(testEdit, d) }

// writeWith is write for the entry edit(seq).
func (r *region) writeWith(edit func(seq uint64) (*Key, *Edit), d Durability) (uint64, error) {
	var txid, seq uint64
	var err error
	we := r.mv.BeginWith(func(n uint64) {
		seq = n
		k, e := edit(n)
		txid, err = r.w.Append(k, e)
	})
	if err == nil {
		err = r.w.Sync(txid, d)
	}
	r.mv.Complete(we)
	return seq, err
}

func (r *region) mustWrite(t testing.TB, d Durability, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		_, err := r.write(d)
		require.NoError(t, err)
	}
}

// replaySeqs replays dir and returns the sequence ids in log order, checking
// every entry.
func replaySeqs(t testing.TB, fs vfs.FS, dir string, fromSeq uint64) ([]uint64, ReplayStats) {
	t.Helper()
	var seqs []uint64
	stats, err := ReplayFS(fs, dir, fromSeq, func(k *Key, e *Edit) error {
		checkEntry(t, k, e)
		seqs = append(seqs, k.SeqNum)
		return nil
	})
	require.NoError(t, err)
	return seqs, stats
}

// loggedSeqs replays dir and returns the sequence ids in log order, of
// entries of any content.
func loggedSeqs(t *testing.T, dir string) ([]uint64, ReplayStats) {
	t.Helper()
	var seqs []uint64
	stats, err := ReplayFS(vfs.Default, dir, 0, func(k *Key, e *Edit) error {
		seqs = append(seqs, k.SeqNum)
		return nil
	})
	require.NoError(t, err)
	return seqs, stats
}

// awaitWriters waits for n writers to report on errs, failing the test on
// an error or if they have not all reported within d (they hung).
func awaitWriters(t *testing.T, errs <-chan error, n int, d time.Duration) {
	t.Helper()
	timeout := time.After(d)
	for i := 0; i < n; i++ {
		select {
		case err := <-errs:
			require.NoError(t, err)
		case <-timeout:
			t.Fatal("writes hung across rolls")
		}
	}
}

func seqRange(from, to uint64) []uint64 {
	var s []uint64
	for i := from; i <= to; i++ {
		s = append(s, i)
	}
	return s
}

func openTest(t testing.TB, dir string, opts Options) *Writer {
	t.Helper()
	w, err := Open(dir, opts)
	require.NoError(t, err)
	return w
}

func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	w := openTest(t, dir, Options{})
	r := newRegion(w, 0)
	r.mustWrite(t, SyncWAL, 100)
	require.NoError(t, w.Close())

	seqs, stats := replaySeqs(t, vfs.Default, dir, 0)
	require.Equal(t, seqRange(1, 100), seqs)
	require.Equal(t, 100, stats.Entries)
	require.Equal(t, 100, stats.Applied)
	require.Equal(t, uint64(100), stats.MaxSeq)
	require.False(t, stats.TornTail)
	require.Equal(t, 1, stats.Segments)

	seqs, stats = replaySeqs(t, vfs.Default, dir, 60)
	require.Equal(t, seqRange(61, 100), seqs)
	require.Equal(t, 60, stats.Skipped)
	require.Equal(t, uint64(100), stats.MaxSeq)

	// A Reader says where each entry is.
	paths, err := ListSegments(vfs.Default, dir)
	require.NoError(t, err)
	rd := NewReader(vfs.Default, paths)
	defer rd.Close()
	_, _, err = rd.Next()
	require.NoError(t, err)
	require.Equal(t, paths[0], rd.Segment())
	require.Equal(t, int64(len(appendSegmentHeader(nil))), rd.Offset())

	// The fn error stops the replay and is returned.
	boom := errors.New("boom")
	_, err = Replay(dir, 0, func(k *Key, e *Edit) error {
		if k.SeqNum == 5 {
			return boom
		}
		return nil
	})
	require.ErrorIs(t, err, boom)
	require.False(t, encoding.IsCorruption(err))
}

func TestEntryEncoding(t *testing.T) {
	// The WALKey is HBase's: check the bytes of a small one by hand.
	k := &Key{EncodedRegionName: []byte("r"), TableName: []byte("t"), SeqNum: 300, WriteTime: 5, OrigSeqNum: 2}
	kv := encoding.KeyValue{Row: []byte("a"), Family: []byte("f"), Qualifier: []byte("q"), Timestamp: 1, Type: encoding.TypePut, Value: []byte("v")}
	b := appendEntry(nil, k, &Edit{Cells: []encoding.KeyValue{kv}})
	wantKey := []byte{
		0x0a, 1, 'r', // 1: encoded_region_name
		0x12, 1, 't', // 2: table_name
		0x18, 0xac, 0x02, // 3: log_sequence_number 300
		0x20, 5, // 4: write_time
		0x38, 1, // 7: following_kv_count
		0x58, 2, // 11: orig_sequence_number
	}
	require.Equal(t, append([]byte{byte(len(wantKey))}, wantKey...), b[:1+len(wantKey)])
	require.Equal(t, encoding.AppendCellBlock(nil, &kv, true), b[1+len(wantKey):])
	gk, ge, err := decodeEntry(b)
	require.NoError(t, err)
	require.Equal(t, k, gk)
	require.Len(t, ge.Cells, 1)
	require.Equal(t, encoding.SeqNum(300), ge.Cells[0].SeqNum)

	// Unknown fields (HBase's scopes, nonces, ...) are skipped.
	withExtra := []byte{0x48, 7, 0x50, 9} // 9: nonceGroup, 10: nonce
	b2 := append([]byte{byte(len(wantKey) + len(withExtra))}, wantKey...)
	b2 = append(b2, withExtra...)
	b2 = append(b2, encoding.AppendCellBlock(nil, &kv, true)...)
	gk, _, err = decodeEntry(b2)
	require.NoError(t, err)
	require.Equal(t, k, gk)

	// A zero write time becomes the current time.
	k.WriteTime = 0
	before := time.Now().UnixMilli()
	gk, _, err = decodeEntry(appendEntry(nil, k, &Edit{}))
	require.NoError(t, err)
	require.GreaterOrEqual(t, gk.WriteTime, before)
}

func TestAppendValidates(t *testing.T) {
	w := openTest(t, t.TempDir(), Options{})
	defer w.Close()
	bad := &Edit{Cells: []encoding.KeyValue{{Row: []byte("r"), Family: bytes.Repeat([]byte("f"), 200)}}}
	_, err := w.Append(&Key{SeqNum: 1}, bad)
	require.Error(t, err)
	_, err = w.Append(&Key{}, &Edit{})
	require.Error(t, err, "sequence id 0")
	// The writer is not broken by a bad entry.
	txid, err := w.Append(&Key{SeqNum: 1}, &Edit{})
	require.NoError(t, err)
	require.Equal(t, uint64(1), txid)
	require.NoError(t, w.Sync(txid, FSyncWAL))
}

func TestDurabilityNames(t *testing.T) {
	for d, name := range map[Durability]string{UseDefault: "USE_DEFAULT", SkipWAL: "SKIP_WAL", AsyncWAL: "ASYNC_WAL", SyncWAL: "SYNC_WAL", FSyncWAL: "FSYNC_WAL"} {
		require.Equal(t, name, d.String())
		got, err := ParseDurability(name)
		require.NoError(t, err)
		require.Equal(t, d, got)
	}
	require.Equal(t, Durability(4), FSyncWAL) // HBase's enum values
	_, err := ParseDurability("SOMETIMES")
	require.Error(t, err)
}

func TestRoll(t *testing.T) {
	dir := t.TempDir()
	w := openTest(t, dir, Options{RollSize: 1024})
	r := newRegion(w, 0)
	// The flush goroutine rolls a full segment while writes go on, so a
	// segment takes what is written meanwhile too: write until 5 rolls.
	n := uint64(0)
	for ; w.Metrics().Rolls < 5; n++ {
		require.Less(t, n, uint64(100_000), "no roll")
		r.mustWrite(t, SyncWAL, 1)
	}
	segs := w.Segments()
	require.Greater(t, len(segs), 5)
	for i, s := range segs {
		require.Equal(t, SegmentName(uint64(i+1)), filepath.Base(s.Path))
		require.Equal(t, i == len(segs)-1, s.Active)
		if !s.Active {
			require.GreaterOrEqual(t, s.Size, int64(1024))
			st, err := os.Stat(s.Path)
			require.NoError(t, err)
			require.Equal(t, s.Size, st.Size())
		}
		if i > 0 && segs[i-1].MaxSeq > 0 {
			require.Greater(t, s.MaxSeq, segs[i-1].MaxSeq)
		}
	}
	require.Equal(t, uint64(len(segs)-1), w.Metrics().Rolls)

	// Roll on demand: what follows goes to a new segment.
	require.NoError(t, w.Roll())
	require.NoError(t, w.Roll()) // an empty segment rolls too
	r.mustWrite(t, AsyncWAL, 1)
	require.NoError(t, w.Close())
	segs2 := w.Segments()
	require.Len(t, segs2, len(segs)+2)
	require.Equal(t, n+1, segs2[len(segs2)-1].MaxSeq)
	require.Equal(t, uint64(0), segs2[len(segs2)-2].MaxSeq)

	seqs, stats := replaySeqs(t, vfs.Default, dir, 0)
	require.Equal(t, seqRange(1, n+1), seqs)
	require.Equal(t, len(segs2), stats.Segments)
}

func TestReopenAndPrune(t *testing.T) {
	dir := t.TempDir()
	w := openTest(t, dir, Options{RollSize: 2048})
	r := newRegion(w, 0)
	// Rolls happen while writes go on (see TestRoll): write until there
	// are segments enough to prune.
	writeRolls := func(w *Writer, r *region, rolls uint64) uint64 {
		n := uint64(0)
		for ; w.Metrics().Rolls < rolls; n++ {
			require.Less(t, n, uint64(100_000), "no roll")
			r.mustWrite(t, SyncWAL, 1)
		}
		return n
	}
	n1 := writeRolls(w, r, 2)
	require.NoError(t, w.Close())
	before := w.Segments()

	// Reopen: the old segments are tracked with their highest sequence
	// ids, and the new segment is numbered after them.
	w = openTest(t, dir, Options{RollSize: 2048})
	segs := w.Segments()
	require.Len(t, segs, len(before)+1)
	for i := range before {
		require.Equal(t, before[i].Path, segs[i].Path)
		require.Equal(t, before[i].MaxSeq, segs[i].MaxSeq)
	}
	require.Equal(t, SegmentName(uint64(len(before)+1)), filepath.Base(segs[len(segs)-1].Path))
	r = newRegion(w, n1)
	n2 := writeRolls(w, r, 4)
	last, flushed := n1+n2, n1+n2/2

	// Prune removes exactly the segments at or below the flushed seq.
	segs = w.Segments()
	var want int
	for _, s := range segs {
		if !s.Active && s.MaxSeq <= flushed {
			want++
		}
	}
	n, err := w.Prune(flushed)
	require.NoError(t, err)
	require.Equal(t, want, n)
	require.Greater(t, n, 2)
	for _, s := range segs[:n] {
		_, err := os.Stat(s.Path)
		require.True(t, os.IsNotExist(err), s.Path)
	}
	seqs, _ := replaySeqs(t, vfs.Default, dir, flushed)
	require.Equal(t, seqRange(flushed+1, last), seqs)

	// Never the active segment, even when everything is flushed.
	_, err = w.Prune(1 << 62)
	require.NoError(t, err)
	segs = w.Segments()
	require.Len(t, segs, 1)
	require.True(t, segs[0].Active)
	_, err = os.Stat(segs[0].Path)
	require.NoError(t, err)
	r.mustWrite(t, SyncWAL, 1)
	require.NoError(t, w.Close())
	seqs, _ = replaySeqs(t, vfs.Default, dir, 0)
	require.Equal(t, last+1, seqs[len(seqs)-1])
}

func TestCloseAndAfter(t *testing.T) {
	w := openTest(t, t.TempDir(), Options{})
	r := newRegion(w, 0)
	k, e := testEdit(1)
	r.mv.Begin()
	txid, err := w.Append(k, e)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	// Close wrote and synced it.
	require.NoError(t, w.Sync(txid, FSyncWAL))
	_, err = w.Append(k, e)
	require.ErrorIs(t, err, ErrClosed)
	require.ErrorIs(t, w.Roll(), ErrClosed)
	require.ErrorIs(t, w.Close(), ErrClosed)
}

// TestGroupCommit checks that concurrent writers share writes and fsyncs.
// Syncs are slowed to 1ms, as on a real disk, so that writers pile up.
func TestGroupCommit(t *testing.T) {
	for _, d := range []Durability{FSyncWAL, SyncWAL} {
		t.Run(d.String(), func(t *testing.T) {
			fs := newTestFS()
			fs.setSyncDelay(time.Millisecond)
			fs.setWriteDelay(200 * time.Microsecond)
			w := openTest(t, t.TempDir(), Options{FS: fs})
			r := newRegion(w, 0)
			const writers, each = 32, 20
			var wg sync.WaitGroup
			for i := 0; i < writers; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r.mustWrite(t, d, each)
				}()
			}
			wg.Wait()
			m := w.Metrics()
			require.Equal(t, uint64(writers*each), m.Appends)
			t.Logf("%s: %d appends, %d writes, %d syncs", d, m.Appends, m.Writes, m.Syncs)
			require.Less(t, m.Writes, m.Appends/4)
			require.Equal(t, int64(m.Writes), fs.writes.Load())
			if d == FSyncWAL {
				require.Less(t, m.Syncs, m.Appends/4)
				require.Equal(t, int64(m.Syncs), fs.syncs.Load())
			} else {
				require.Zero(t, fs.syncs.Load(), "SYNC_WAL must not fsync")
			}
			require.NoError(t, w.Close())
		})
	}
}

// TestSyncWALWritten checks that a SYNC_WAL entry is in the file, readable by
// another reader, when Sync returns, with the writer still open and without
// an fsync.
func TestSyncWALWritten(t *testing.T) {
	fs := newTestFS()
	dir := t.TempDir()
	w := openTest(t, dir, Options{FS: fs, AsyncFlushInterval: time.Hour})
	defer w.Close()
	r := newRegion(w, 0)
	for i := uint64(1); i <= 20; i++ {
		r.mustWrite(t, SyncWAL, 1)
		seqs, stats := replaySeqs(t, vfs.Default, dir, 0)
		require.Equal(t, seqRange(1, i), seqs)
		require.False(t, stats.TornTail)
	}
	require.Zero(t, fs.syncs.Load())
}

// TestFSyncWALSurvivesPowerLoss simulates power loss after every
// acknowledged FSYNC_WAL write (keeping only synced bytes of files whose
// directory entry was synced) and checks that every acknowledged entry is
// there, across rolls.
func TestFSyncWALSurvivesPowerLoss(t *testing.T) {
	fs := newTestFS()
	dir := t.TempDir()
	w := openTest(t, dir, Options{FS: fs, RollSize: 600, AsyncFlushInterval: time.Hour})
	defer w.Close()
	r := newRegion(w, 0)
	for i := uint64(1); i <= 30; i++ {
		r.mustWrite(t, FSyncWAL, 1)
		if i%3 == 0 {
			r.mustWrite(t, SyncWAL, 1) // may be lost
		}
		crashed := t.TempDir()
		fs.crashCopy(t, crashed)
		seqs, _ := replaySeqs(t, vfs.Default, crashed, 0)
		require.GreaterOrEqual(t, len(seqs), int(r.mv.WritePoint())-1)
		require.Equal(t, seqRange(1, uint64(len(seqs))), seqs)
	}
	require.Greater(t, len(w.Segments()), 3)
}

// TestAsyncWAL checks that an ASYNC_WAL Sync does not wait for any I/O, and
// that the entry is written within the flush interval anyway.
func TestAsyncWAL(t *testing.T) {
	fs := newTestFS()
	dir := t.TempDir()
	w := openTest(t, dir, Options{FS: fs, AsyncFlushInterval: 10 * time.Millisecond})
	defer w.Close()
	r := newRegion(w, 0)
	gate := make(chan struct{})
	fs.setWriteGate(gate)
	start := time.Now()
	r.mustWrite(t, AsyncWAL, 3) // would hang if it waited for a write
	require.Less(t, time.Since(start), 5*time.Second)
	fs.setWriteGate(nil)
	close(gate)
	require.Eventually(t, func() bool {
		seqs, _ := replaySeqs(t, vfs.Default, dir, 0)
		return len(seqs) == 3
	}, 5*time.Second, 5*time.Millisecond)
	require.Zero(t, fs.syncs.Load())

	// Beyond MaxAsyncPendingBytes, ASYNC_WAL waits like SYNC_WAL.
	dir2 := t.TempDir()
	w2 := openTest(t, dir2, Options{AsyncFlushInterval: time.Hour, MaxAsyncPendingBytes: 1})
	defer w2.Close()
	newRegion(w2, 0).mustWrite(t, AsyncWAL, 2)
	seqs, _ := replaySeqs(t, vfs.Default, dir2, 0)
	require.Equal(t, seqRange(1, 2), seqs)
}

var errInjected = errors.New("injected fault")

// TestSyncFailure fails an fsync in the middle of a concurrent FSYNC_WAL
// load: every writer waiting on it gets the error, no entry written after the
// last good fsync is acknowledged, and the writer stays broken.
func TestSyncFailure(t *testing.T) {
	fs := newTestFS()
	dir := t.TempDir()
	w := openTest(t, dir, Options{FS: fs, AsyncFlushInterval: time.Hour})
	r := newRegion(w, 0)
	var nsyncs atomic.Int64
	fs.setSyncDelay(200 * time.Microsecond)
	fs.setSyncErr(func(string) error {
		if nsyncs.Add(1) > 10 {
			return errInjected
		}
		return nil
	})
	const writers = 16
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		acked []uint64
		errs  []error
	)
	for i := 0; i < writers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				seq, err := r.write(FSyncWAL)
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
					mu.Unlock()
					return
				}
				acked = append(acked, seq)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	require.Len(t, errs, writers)
	for _, err := range errs {
		require.ErrorIs(t, err, errInjected)
	}
	require.NotEmpty(t, acked)

	// Nothing acknowledged depends on the failed fsync.
	crashed := t.TempDir()
	fs.crashCopy(t, crashed)
	seqs, _ := replaySeqs(t, vfs.Default, crashed, 0)
	have := map[uint64]bool{}
	for _, s := range seqs {
		have[s] = true
	}
	for _, s := range acked {
		require.True(t, have[s], "acknowledged seq %d lost", s)
	}

	// Broken until reopened.
	_, err := r.write(SyncWAL)
	require.ErrorIs(t, err, errInjected)
	require.ErrorIs(t, w.Roll(), errInjected)
	require.ErrorIs(t, w.Sync(w.Metrics().Appends, FSyncWAL), errInjected)
	require.ErrorIs(t, w.Close(), errInjected)

	fs.setSyncErr(nil)
	w = openTest(t, dir, Options{FS: fs})
	r = newRegion(w, r.mv.WritePoint())
	r.mustWrite(t, FSyncWAL, 1)
	require.NoError(t, w.Close())
}

func TestWriteFailure(t *testing.T) {
	fs := newTestFS()
	w := openTest(t, t.TempDir(), Options{FS: fs, AsyncFlushInterval: time.Hour})
	r := newRegion(w, 0)
	r.mustWrite(t, SyncWAL, 5)
	fs.setWriteErr(func(string) error { return errInjected })
	fs.setWriteDelay(time.Millisecond)
	var wg sync.WaitGroup
	var failed atomic.Int64
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := r.write(SyncWAL); errors.Is(err, errInjected) {
				failed.Add(1)
			}
		}()
	}
	wg.Wait()
	require.Equal(t, int64(8), failed.Load())
	require.ErrorIs(t, w.Close(), errInjected)
}

// TestConcurrentAppends runs writers with mixed durabilities, rolling as it
// goes, and checks that the log holds every sequence id once, in order.
func TestConcurrentAppends(t *testing.T) {
	dir := t.TempDir()
	w := openTest(t, dir, Options{RollSize: 16 << 10, AsyncFlushInterval: time.Millisecond})
	r := newRegion(w, 0)
	const writers, each = 8, 150
	var wg sync.WaitGroup
	for i := 0; i < writers; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(i), 0))
			for j := 0; j < each; j++ {
				d := []Durability{AsyncWAL, SyncWAL, FSyncWAL, UseDefault}[rng.IntN(4)]
				_, err := r.write(d)
				require.NoError(t, err)
				if i == 0 && j%50 == 0 {
					require.NoError(t, w.Roll())
				}
				if i == 1 && j%40 == 0 {
					_, err := w.Prune(0)
					require.NoError(t, err)
					_ = w.Segments()
				}
			}
		}(i)
	}
	wg.Wait()
	require.NoError(t, w.Close())
	seqs, stats := replaySeqs(t, vfs.Default, dir, 0)
	require.Equal(t, seqRange(1, writers*each), seqs)
	require.True(t, sort.SliceIsSorted(seqs, func(i, j int) bool { return seqs[i] < seqs[j] }))
	require.Greater(t, stats.Segments, 3)
}

func TestReaderAtEOF(t *testing.T) {
	rd := NewReader(vfs.Default, nil)
	_, _, err := rd.Next()
	require.Equal(t, io.EOF, err)
	require.NoError(t, rd.Close())
}

// holdWALSyncs makes fs hold the first fsync of a segment until release is
// closed, and then fail it with err (nil: succeed); entered is closed when
// it is held.
func holdWALSyncs(fs *testFS, err error) (entered, release chan struct{}) {
	entered, release = make(chan struct{}), make(chan struct{})
	var once sync.Once
	fs.setSyncErr(func(path string) error {
		if !strings.HasSuffix(path, ".wal") {
			return nil
		}
		first := false
		once.Do(func() { first = true; close(entered) })
		if !first {
			return nil
		}
		<-release
		return err
	})
	return entered, release
}

// writeWhileHeld writes n SyncWAL entries with r from another goroutine and
// fails the test if they do not all return: they must not wait for the
// fsync the test holds.
func writeWhileHeld(t *testing.T, r *region, n int) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		for i := 0; i < n; i++ {
			if _, err := r.write(SyncWAL); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("SyncWAL writes waited for the fsync of entries written before them")
	}
}

// whileSyncHeld opens a writer on a testFS and writes 10 SyncWAL entries;
// then runs op in a goroutine with the segment's first fsync held, writes
// 10 more SyncWAL entries meanwhile (which must not wait for it: see
// writeWhileHeld), lets the fsync end with syncErr and returns op's error.
func whileSyncHeld(t *testing.T, syncErr error, op func(*Writer) error) (*testFS, string, *Writer, *region, error) {
	fs := newTestFS()
	dir := t.TempDir()
	w := openTest(t, dir, Options{FS: fs, AsyncFlushInterval: time.Hour})
	r := newRegion(w, 0)
	r.mustWrite(t, SyncWAL, 10)
	entered, release := holdWALSyncs(fs, syncErr)
	done := make(chan error, 1)
	go func() { done <- op(w) }()
	<-entered
	writeWhileHeld(t, r, 10)
	close(release)
	return fs, dir, w, r, <-done
}

// TestSyncAllFreesWriters: an fsync with nothing to write first (a flush's
// SyncAll after SyncWAL writes) leaves the file free: SyncWAL writes go on
// while it runs, and everything reads back.
func TestSyncAllFreesWriters(t *testing.T) {
	_, dir, w, _, err := whileSyncHeld(t, nil, (*Writer).SyncAll)
	require.NoError(t, err)
	require.NoError(t, w.SyncAll())
	require.NoError(t, w.Close())
	seqs, stats := replaySeqs(t, vfs.Default, dir, 0)
	require.Equal(t, seqRange(1, 20), seqs)
	require.False(t, stats.TornTail)
}

// TestSyncAllFailsFree: when such an fsync fails, SyncAll returns the error
// and the writer is broken, but the SyncWAL writes acknowledged while it
// ran stay: Reset keeps every written entry.
func TestSyncAllFailsFree(t *testing.T) {
	fs, dir, w, r, err := whileSyncHeld(t, syscall.EIO, (*Writer).SyncAll)
	require.ErrorIs(t, err, syscall.EIO)
	require.ErrorIs(t, w.Err(), syscall.EIO)
	_, err = r.write(SyncWAL)
	require.ErrorIs(t, err, syscall.EIO, "a broken writer takes no entry")
	fs.setSyncErr(nil)
	require.NoError(t, w.Reset())
	r.mustWrite(t, FSyncWAL, 5)
	require.NoError(t, w.Close())
	seqs, _ := replaySeqs(t, vfs.Default, dir, 0)
	// The entry refused by the broken writer took sequence id 21.
	require.Equal(t, append(seqRange(1, 20), seqRange(22, 26)...), seqs)
}

// TestRollFreesWriters: a roll fsyncs what is written with the file free
// before it holds writers for the rest, so SyncWAL writes go on while that
// fsync runs; they land in the old segment or the new one, and all read
// back.
func TestRollFreesWriters(t *testing.T) {
	_, dir, w, r, err := whileSyncHeld(t, nil, (*Writer).Roll)
	require.NoError(t, err)
	require.Len(t, w.Segments(), 2)
	r.mustWrite(t, SyncWAL, 5)
	require.NoError(t, w.Close())
	seqs, stats := replaySeqs(t, vfs.Default, dir, 0)
	require.Equal(t, seqRange(1, 25), seqs)
	require.False(t, stats.TornTail)
}

// TestSizeRollFreesTheFillingWriter: the SyncWAL write that fills a segment
// does not roll it itself. In the region that write's mvcc entry is still
// in flight until it returns, so every other writer would wait for the
// roll's first fsync (milliseconds); the flush goroutine rolls instead.
// Here that fsync is held: the filling write returns, later writes go on
// meanwhile, the roll ends once it is released, and everything reads back.
func TestSizeRollFreesTheFillingWriter(t *testing.T) {
	fs := newTestFS()
	dir := t.TempDir()
	w := openTest(t, dir, Options{FS: fs, AsyncFlushInterval: time.Hour, RollSize: 4 << 10})
	r := newRegion(w, 0)
	entered, release := holdWALSyncs(fs, nil)
	filled := make(chan error, 1)
	go func() {
		for {
			select {
			case <-entered:
				filled <- nil
				return
			default:
			}
			if _, err := r.write(SyncWAL); err != nil {
				filled <- err
				return
			}
		}
	}()
	select {
	case err := <-filled:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("the write that filled the segment waited for the roll's fsync")
	}
	writeWhileHeld(t, r, 10)
	require.Len(t, w.Segments(), 1, "the roll is still in its held fsync")
	close(release)
	require.Eventually(t, func() bool { return len(w.Segments()) == 2 }, 30*time.Second, time.Millisecond)
	written := r.mv.WritePoint()
	r.mustWrite(t, SyncWAL, 5)
	require.NoError(t, w.Close())
	seqs, stats := replaySeqs(t, vfs.Default, dir, 0)
	require.Equal(t, seqRange(1, written+5), seqs)
	require.False(t, stats.TornTail)
}

// TestSizeRollsUnderConcurrentWriters rolls small segments constantly
// under concurrent SyncWAL and FSyncWAL writers and SyncAll calls, so that
// rounds hand full segments to the flush goroutine while it is itself in a
// roll's fsync with the file free, or waiting for the file after it: no
// write may hang, and every entry reads back in order.
func TestSizeRollsUnderConcurrentWriters(t *testing.T) {
	dir := t.TempDir()
	w := openTest(t, dir, Options{RollSize: 2 << 10, AsyncFlushInterval: time.Hour})
	r := newRegion(w, 0)
	const writers, each = 8, 1500
	errs := make(chan error, writers+1)
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				errs <- nil
				return
			default:
			}
			if err := w.SyncAll(); err != nil {
				errs <- err
				return
			}
		}
	}()
	for i := 0; i < writers; i++ {
		go func(i int) {
			for j := 0; j < each; j++ {
				d := SyncWAL
				if (i+j)%7 == 0 {
					d = FSyncWAL
				}
				if _, err := r.write(d); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}(i)
	}
	awaitWriters(t, errs, writers, 60*time.Second)
	close(stop)
	require.NoError(t, <-errs)
	require.Greater(t, w.Metrics().Rolls, uint64(20))
	require.NoError(t, w.Close())
	seqs, stats := replaySeqs(t, vfs.Default, dir, 0)
	require.Equal(t, seqRange(1, writers*each), seqs)
	require.False(t, stats.TornTail)
}
