package wal

import (
	"sync"
	"sync/atomic"
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
			// Also at SyncWAL, whose check of written skips the lock:
			// Reset moved written past the lost entry.
			require.ErrorIs(t, w.Sync(w.Metrics().Appends, SyncWAL), tc.errno,
				"a SyncWAL Sync of a lost entry fails after the Reset")

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

// TestResetUnderLoad fails every few writes while writers wait on each
// other's rounds and another goroutine resets the writer as soon as it
// breaks: a caller that was waiting when its entry was dropped must get the
// error even if the Reset ran before it woke, so every acknowledged entry is
// in the log.
func TestResetUnderLoad(t *testing.T) {
	fs := newTestFS()
	dir := t.TempDir()
	w := openTest(t, dir, Options{FS: fs, AsyncFlushInterval: time.Hour})
	r := newRegion(w, 0)
	var nwrites atomic.Int64
	fs.setWriteDelay(50 * time.Microsecond)
	fs.setWriteErr(func(string) error {
		if nwrites.Add(1)%5 == 0 {
			return errInjected
		}
		return nil
	})
	stop := make(chan struct{})
	resetDone := make(chan struct{})
	go func() {
		defer close(resetDone)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if w.Err() != nil {
				_ = w.Reset() // fails when the new header's write is hit
			} else {
				time.Sleep(10 * time.Microsecond)
			}
		}
	}()
	const writers, each = 8, 60
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		acked []uint64
	)
	for i := 0; i < writers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < each; j++ {
				seq, err := r.write(SyncWAL)
				if err != nil {
					require.ErrorIs(t, err, errInjected)
					continue
				}
				mu.Lock()
				acked = append(acked, seq)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(stop)
	<-resetDone
	fs.setWriteErr(nil)
	require.NoError(t, w.Reset())
	require.NoError(t, w.Close())
	require.NotEmpty(t, acked)

	seqs, _ := replaySeqs(t, vfs.Default, dir, 0)
	have := map[uint64]bool{}
	for _, s := range seqs {
		have[s] = true
	}
	for _, s := range acked {
		require.True(t, have[s], "acknowledged seq %d lost", s)
	}
}

// TestBrokenBesideARound: an fsync run with the file free (a flush's
// SyncAll) fails while another caller's round is writing the file. The
// writer is broken with that round in progress; Reset and Close must wait
// for it rather than take the file from under it: the round's entry is
// written and acknowledged, and the file is not closed while it writes.
func TestBrokenBesideARound(t *testing.T) {
	for _, then := range []string{"reset", "close"} {
		t.Run(then, func(t *testing.T) {
			fs := newTestFS()
			dir := t.TempDir()
			w := openTest(t, dir, Options{FS: fs, AsyncFlushInterval: time.Hour})
			r := newRegion(w, 0)
			r.mustWrite(t, SyncWAL, 1) // written, not fsync'd

			var failed atomic.Bool
			fs.setSyncDelay(50 * time.Millisecond)
			fs.setSyncErr(func(string) error {
				if failed.CompareAndSwap(false, true) {
					return errInjected
				}
				return nil
			})
			syncAll := make(chan error, 1)
			go func() { syncAll <- w.SyncAll() }()
			waitFor(t, w, func() bool { return w.mu.syncing })

			// A round of another caller, held in its write.
			gate := make(chan struct{})
			fs.setWriteGate(gate)
			wrote := make(chan error, 1)
			go func() {
				_, err := r.write(SyncWAL)
				wrote <- err
			}()
			waitFor(t, w, func() bool { return w.mu.busy && !w.mu.syncing })
			require.ErrorIs(t, <-syncAll, errInjected)

			done := make(chan error, 1)
			go func() {
				if then == "reset" {
					done <- w.Reset()
				} else {
					done <- w.Close()
				}
			}()
			select {
			case err := <-done:
				t.Fatalf("%s returned (%v) while a round was writing", then, err)
			case <-time.After(50 * time.Millisecond):
			}
			fs.setWriteGate(nil)
			close(gate)
			require.NoError(t, <-wrote, "the round's entry")
			err := <-done
			if then == "reset" {
				require.NoError(t, err)
				r.mustWrite(t, SyncWAL, 1)
				require.NoError(t, w.Close())
			} else {
				require.ErrorIs(t, err, errInjected)
			}
			fs.setSyncErr(nil)
			seqs, _ := replaySeqs(t, vfs.Default, dir, 0)
			if then == "reset" {
				require.Equal(t, []uint64{1, 2, 3}, seqs)
			} else {
				require.Equal(t, []uint64{1, 2}, seqs)
			}
		})
	}
}

// waitFor waits until cond, evaluated with w.mu held, holds.
func waitFor(t *testing.T, w *Writer, cond func() bool) {
	t.Helper()
	require.Eventually(t, func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		return cond()
	}, 10*time.Second, time.Millisecond)
}
