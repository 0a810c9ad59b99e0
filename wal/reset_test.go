package wal

import (
	"syscall"
	"testing"
	"time"

	"github.com/regionkv/regionkv/internal/vfs"
	"github.com/regionkv/regionkv/internal/vfs/errorfs"
	"github.com/stretchr/testify/require"
)

// TestReset breaks the writer with each kind of disk fault, checks that it
// acknowledges nothing while broken (and that Reset fails while the fault
// persists), then resets it once the fault is gone: the failed entries are
// gone from the log, later entries are durable, and a replay reads every
// acknowledged entry and nothing else, with no corruption in the middle.
func TestReset(t *testing.T) {
	for _, tc := range []struct {
		name  string
		rule  errorfs.Rule
		errno syscall.Errno
	}{
		{"fsync EIO", errorfs.Rule{Ops: errorfs.OpSync, PathContains: ".wal"}, syscall.EIO},
		{"write ENOSPC", errorfs.Rule{Ops: errorfs.OpWrite, PathContains: ".wal", Err: syscall.ENOSPC}, syscall.ENOSPC},
		{"short write ENOSPC", errorfs.Rule{Ops: errorfs.OpWrite, PathContains: ".wal", Kind: errorfs.ShortWrite, Err: syscall.ENOSPC}, syscall.ENOSPC},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			fs := errorfs.New(vfs.Default, 1)
			w := openTest(t, dir, Options{FS: fs, AsyncFlushInterval: time.Hour})
			r := newRegion(w, 0)
			var acked []uint64
			for i := 0; i < 10; i++ {
				d := SyncWAL
				if i%2 == 0 {
					d = FSyncWAL
				}
				seq, err := r.write(d)
				require.NoError(t, err)
				acked = append(acked, seq)
			}

			fault := fs.Add(tc.rule)
			_, err := r.write(FSyncWAL)
			require.ErrorIs(t, err, tc.errno)
			require.ErrorIs(t, w.Err(), tc.errno)
			// A broken writer takes no more entries.
			we := r.mv.BeginWith(func(n uint64) {
				k, e := testEdit(n)
				_, err = w.Append(k, e)
			})
			r.mv.Complete(we)
			require.ErrorIs(t, err, tc.errno, "Append on a broken writer")
			_, err = r.write(SyncWAL)
			require.ErrorIs(t, err, tc.errno)
			require.ErrorIs(t, w.Roll(), tc.errno)

			// The fault persists: Reset fails and the writer stays broken.
			// (A write fault fails the new segment's header, a sync fault
			// the fsync of the truncated segment.)
			require.ErrorIs(t, w.Reset(), tc.errno)
			require.Error(t, w.Err())

			fault.Remove()
			require.NoError(t, w.Reset())
			require.NoError(t, w.Err())
			require.NoError(t, w.Reset(), "Reset of a healthy writer is a no-op")
			require.ErrorIs(t, w.Sync(w.Metrics().Appends, FSyncWAL), tc.errno,
				"a Sync of an entry lost by the failure fails after the Reset too")

			for i := 0; i < 10; i++ {
				seq, err := r.write(FSyncWAL)
				require.NoError(t, err)
				acked = append(acked, seq)
			}
			require.NoError(t, w.Close())
			require.NotZero(t, fs.Injected())

			seqs, stats := replaySeqs(t, vfs.Default, dir, 0)
			require.False(t, stats.TornTail)
			require.Equal(t, acked, seqs, "the log holds exactly the acknowledged entries")

			// And it opens again, cleanly.
			w = openTest(t, dir, Options{})
			require.NoError(t, w.Close())
		})
	}
}

// TestResetWhileHealthyOrClosed covers the trivial cases.
func TestResetWhileHealthyOrClosed(t *testing.T) {
	w := openTest(t, t.TempDir(), Options{})
	require.NoError(t, w.Reset())
	require.NoError(t, w.Err())
	require.NoError(t, w.Close())
	require.ErrorIs(t, w.Reset(), ErrClosed)
}
