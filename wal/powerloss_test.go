package wal

import (
	"math/rand/v2"
	"testing"

	"github.com/regionkv/regionkv/internal/vfs/crashfs"
	"github.com/stretchr/testify/require"
)

// Power loss (internal/vfs/crashfs): only what was fsync'd survives, and a
// random part of the rest. Every segment but the last must be durable whole,
// or the log of a crashed region reads as corrupt in the middle and the
// region does not open. region/powerloss_test.go found both cases below.

func newCrashFS(t *testing.T, dir string) *crashfs.FS {
	fs := crashfs.New()
	require.NoError(t, fs.MkdirAll(dir, 0o755))
	fs.SyncAll()
	return fs
}

// checkImage replays the image and checks it holds exactly want, in order.
func checkImage(t *testing.T, img *crashfs.FS, dir string, want []uint64, seed uint64) {
	t.Helper()
	var got []uint64
	_, err := ReplayFS(img, dir, 0, func(k *Key, e *Edit) error {
		checkEntry(t, k, e)
		got = append(got, k.SeqNum)
		return nil
	})
	require.NoError(t, err, "seed %d:\n%s", seed, img)
	require.Equal(t, want, got, "seed %d", seed)
	// And the writer opens on it.
	w, err := Open(dir, Options{FS: img})
	require.NoError(t, err, "seed %d", seed)
	require.NoError(t, w.Close())
}

// TestPowerLossEmptyRoll: a segment rolled before any entry was written to
// it holds only its header, which was never fsync'd (the roll fsyncs only
// when entries are unsynced); a power loss may then leave it empty or torn
// although a later segment exists. The roll must fsync it all the same.
func TestPowerLossEmptyRoll(t *testing.T) {
	for seed := range uint64(40) {
		fs := newCrashFS(t, "/w")
		w := openTest(t, "/w", Options{FS: fs})
		r := newRegion(w, 0)
		var acked []uint64
		for range 3 {
			seq, err := r.write(FSyncWAL)
			require.NoError(t, err)
			acked = append(acked, seq)
		}
		require.NoError(t, w.Roll())
		require.NoError(t, w.Roll()) // the segment in between has no entries
		seq, err := r.write(FSyncWAL)
		require.NoError(t, err)
		acked = append(acked, seq)
		img := fs.Crash(rand.New(rand.NewPCG(seed, 1)))
		_ = w.Close() // the power is off: fails fast
		checkImage(t, img, "/w", acked, seed)
	}
}

// TestPowerLossAfterRestart: a process killed after SYNC_WAL writes leaves
// them in the page cache, not on disk. The next Open reads them back (the
// region replays them into its memstore) and starts a new segment; if it
// does not fsync the old one first, a power loss can tear the old one's
// tail while the new one, holding later FSYNC_WAL writes, survives: the log
// is then corrupt in the middle (and the replayed writes, which the
// region's later writes built on, are gone).
func TestPowerLossAfterRestart(t *testing.T) {
	for seed := range uint64(40) {
		fs := newCrashFS(t, "/w")
		w1 := openTest(t, "/w", Options{FS: fs})
		r1 := newRegion(w1, 0)
		var acked []uint64
		for range 5 {
			seq, err := r1.write(SyncWAL)
			require.NoError(t, err)
			acked = append(acked, seq)
		}
		// The process dies (w1 is never closed) and a new one opens the
		// log, as it is in the page cache.
		seqs, _ := replaySeqs(t, fs, "/w", 0)
		require.Equal(t, acked, seqs)
		w2 := openTest(t, "/w", Options{FS: fs})
		r2 := newRegion(w2, acked[len(acked)-1])
		seq, err := r2.write(FSyncWAL)
		require.NoError(t, err)
		acked = append(acked, seq)
		img := fs.Crash(rand.New(rand.NewPCG(seed, 2)))
		_ = w1.Close()
		_ = w2.Close()
		checkImage(t, img, "/w", acked, seed)
	}
}
