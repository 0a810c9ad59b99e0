package wal

import (
	"hash/crc32"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/internal/record"
	"github.com/regionkv/regionkv/mvcc"
	"github.com/stretchr/testify/require"
)

// preparedEdit is an entry whose content does not depend on its sequence
// id, so that it can be prepared with one and appended with another.
func preparedEdit(cells int) (*Key, *Edit) {
	k := &Key{EncodedRegionName: []byte("1588230740abcdef"), TableName: []byte("ns:t1"), WriteTime: 1700000000000}
	e := &Edit{}
	for i := 0; i < cells; i++ {
		e.Cells = append(e.Cells, encoding.KeyValue{Row: []byte("row"), Family: []byte("f"),
			Qualifier: []byte{byte('a' + i%26)}, Timestamp: int64(i), Type: encoding.TypePut,
			Value: make([]byte, i*37)})
	}
	return k, e
}

// TestPreparedEntryMatchesAppend checks that a prepared entry appended with
// any sequence id is byte for byte the record Append writes for it, whether
// the id's varint has the prepared length (the checksum is patched) or not
// (the record is re-framed).
func TestPreparedEntryMatchesAppend(t *testing.T) {
	seqs := []uint64{1, 2, 127, 128, 129, 300, 16383, 16384, 1 << 21, 1<<28 - 1, 1 << 35, 1<<56 + 3,
		math.MaxUint64 - 1, math.MaxUint64}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 200; i++ {
		seqs = append(seqs, rng.Uint64()>>rng.IntN(64)+1)
	}
	var p PreparedEntry
	for _, cells := range []int{0, 1, 3, 40} {
		for _, hint := range seqs {
			for _, seq := range []uint64{hint, hint + 1, seqs[rng.IntN(len(seqs))]} {
				if seq == 0 {
					continue
				}
				k, e := preparedEdit(cells)
				k.SeqNum = hint
				require.NoError(t, p.Prepare(k, e))
				got, err := p.appendTo([]byte("prefix"), seq)
				require.NoError(t, err)

				k.SeqNum = seq
				want, err := record.Append([]byte("prefix"), appendEntry(nil, k, e))
				require.NoError(t, err)
				require.Equal(t, want, got, "cells %d, prepared with %d, appended with %d", cells, hint, seq)
				payload, _, err := record.Decode(got[len("prefix"):])
				require.NoError(t, err)
				dk, _, err := decodeEntry(payload)
				require.NoError(t, err)
				require.Equal(t, seq, dk.SeqNum)
			}
		}
	}
}

func TestPreparedEntryErrors(t *testing.T) {
	w := openTest(t, t.TempDir(), Options{})
	defer w.Close()
	var p PreparedEntry
	_, err := w.AppendPrepared(&p, 1)
	require.Error(t, err, "not prepared")
	k, e := preparedEdit(1)
	require.Error(t, p.Prepare(k, e), "no sequence id")
	k.SeqNum = 1
	e.Cells[0].Row = make([]byte, encoding.MaxRowLen+1)
	require.Error(t, p.Prepare(k, e), "invalid cell")
	_, err = w.AppendPrepared(&p, 1)
	require.Error(t, err, "a failed Prepare leaves no entry")
	k, e = preparedEdit(1)
	k.SeqNum = 1
	require.NoError(t, p.Prepare(k, e))
	_, err = w.AppendPrepared(&p, 0)
	require.Error(t, err)
}

// TestAppendPreparedConcurrent runs writers that prepare before taking their
// sequence id, as the region does, across rolls and varint lengths, and
// checks the log.
func TestAppendPreparedConcurrent(t *testing.T) {
	dir := t.TempDir()
	w := openTest(t, dir, Options{RollSize: 8 << 10, AsyncFlushInterval: time.Millisecond})
	mv := mvcc.New(16000) // crosses 16384 (a longer varint) as it goes
	const writers, each = 8, 100
	var wg sync.WaitGroup
	for i := 0; i < writers; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			var p PreparedEntry
			for j := 0; j < each; j++ {
				k, e := preparedEdit(1 + j%3)
				k.SeqNum = mv.WritePoint() + 1
				require.NoError(t, p.Prepare(k, e))
				var txid uint64
				var err error
				we := mv.BeginWith(func(seq uint64) { txid, err = w.AppendPrepared(&p, seq) })
				if err == nil {
					err = w.Sync(txid, []Durability{AsyncWAL, SyncWAL, FSyncWAL}[(i+j)%3])
				}
				mv.Complete(we)
				require.NoError(t, err)
			}
		}(i)
	}
	wg.Wait()
	require.NoError(t, w.Close())
	seqs, _ := loggedSeqs(t, dir)
	require.Equal(t, seqRange(16001, 16000+writers*each), seqs)
}

// TestAppendPreparedAllocs checks that appending a prepared entry and
// syncing it does not allocate once buffers have grown, whether the entry
// was prepared with its sequence id or with another of the same length
// (patched in).
func TestAppendPreparedAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("-race allocates")
	}
	for _, guessOff := range []uint64{0, 3} {
		w := openTest(t, t.TempDir(), Options{})
		defer w.Close()
		testAppendPreparedAllocs(t, w, guessOff)
	}
}

func testAppendPreparedAllocs(t *testing.T, w *Writer, guessOff uint64) {
	k, e := preparedEdit(2)
	var p PreparedEntry
	seq := uint64(1000) // 1000 … 2001 and their guesses: two-byte varints
	var err error
	allocs := testing.AllocsPerRun(1000, func() {
		seq++
		k.SeqNum = seq - guessOff
		if err = p.Prepare(k, e); err != nil {
			return
		}
		var txid uint64
		if txid, err = w.AppendPrepared(&p, seq); err == nil {
			err = w.Sync(txid, SyncWAL)
		}
	})
	require.NoError(t, err)
	require.Zero(t, allocs, "prepared %d below the sequence id", guessOff)
}

// TestXPow8n checks the shift of a raw CRC over n zero bytes against
// running the CRC register over them.
func TestXPow8n(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	zeros := make([]byte, 3<<20)
	ns := []int{0, 1, 2, 255, 256, 257, 65535, 65536, 65537, len(zeros)}
	for i := 0; i < 50; i++ {
		ns = append(ns, rng.IntN(len(zeros)+1))
	}
	for _, n := range ns {
		c := rng.Uint32()
		want := ^crc32.Update(^c, castagnoli, zeros[:n])
		require.Equal(t, want, gfMul(c, xPow8n(uint64(n))), "n=%d", n)
	}
}

// TestPreparedWritesAcrossRolls drives AppendPrepared from many writers
// through several size rolls of mapped segments big enough to be written
// back (RollSize/8 at least a chunk), so that records go both straight
// into the mapping (appendDirectLocked) and through rounds, and writebacks
// and rolls coincide. Every entry must be replayed, in sequence-id order, and no
// writer may hang: a roll waiting for the file (the flush goroutine in
// rollLocked, after its fsync with the file free) missed the wake-up of
// the round that handed it over when that round had also started a
// writeback, which releases the lock between the round's broadcast and
// the hand-over. Every writer then waited for good; on the code before the
// fix this test hung in 5 of 7 runs.
func TestPreparedWritesAcrossRolls(t *testing.T) {
	dir := t.TempDir()
	w := openTest(t, dir, Options{RollSize: 8 << 20, AsyncFlushInterval: time.Hour})
	mv := mvcc.New(0)
	const writers, each = 32, 1000
	errs := make(chan error, writers)
	// About 5 segments' worth a pass; but a roll's first fsync lets rounds
	// go on writing the old segment, so a slow disk (a busy CI machine)
	// can take most of a pass into one segment: pass again until the
	// rolls happened.
	passes := 0
	for ; passes < 10 && (passes == 0 || w.Metrics().Rolls <= 2); passes++ {
		writePreparedPass(t, w, mv, writers, each, errs)
	}
	t.Logf("%d passes, %d rolls", passes, w.Metrics().Rolls)
	require.Greater(t, w.Metrics().Rolls, uint64(2))
	require.NoError(t, w.Close())
	seqs, _ := loggedSeqs(t, dir)
	require.Equal(t, seqRange(1, uint64(passes*writers*each)), seqs)
}

// writePreparedPass has writers goroutines append each prepared entries
// to w in mv's order, and waits for them.
func writePreparedPass(t *testing.T, w *Writer, mv *mvcc.Control, writers, each int, errs chan error) {
	t.Helper()
	for i := 0; i < writers; i++ {
		go func() {
			var p PreparedEntry
			k, e := preparedEdit(8)
			for j := 0; j < each; j++ {
				k.SeqNum = mv.WritePoint() + 1
				if err := p.Prepare(k, e); err != nil {
					errs <- err
					return
				}
				var txid uint64
				var err error
				we := mv.BeginWith(func(n uint64) { txid, err = w.AppendPrepared(&p, n) })
				if err == nil {
					err = w.Sync(txid, SyncWAL)
				}
				mv.Complete(we)
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	awaitWriters(t, errs, writers, 90*time.Second)
}
