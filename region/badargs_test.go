package region

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

// TestNilArguments: nil (and typed-nil) arguments of the embedded API are
// argument errors, not panics; a Put without cells is refused as HBase
// refuses it.
func TestNilArguments(t *testing.T) {
	r := openTest(t, t.TempDir(), nil)
	defer r.Close()
	var nilPut *Put
	var nilDelete *Delete
	calls := map[string]func() error{
		"Get(nil)":            func() error { _, err := r.Get(nil); return err },
		"GetInto(nil, res)":   func() error { _, err := r.GetInto(nil, &Result{}); return err },
		"NewScanner(nil)":     func() error { _, err := r.NewScanner(nil); return err },
		"Put(nil)":            func() error { return r.Put(nil) },
		"Delete(nil)":         func() error { return r.Delete(nil) },
		"Batch(nil Mutation)": func() error { return r.Batch([]Mutation{nil}) },
		"Batch(typed nil)":    func() error { return r.Batch([]Mutation{NewPut(b("a")).Add(fam, b("q"), b("v")), nilPut}) },
		"Batch(nil *Delete)":  func() error { return r.Batch([]Mutation{nilDelete}) },
		"Increment(nil)":      func() error { _, err := r.Increment(nil); return err },
		"Append(nil)":         func() error { _, err := r.Append(nil); return err },
		"CheckAndMutate(nil)": func() error { _, err := r.CheckAndMutate(nil); return err },
		"CheckAndMutate(typed nil mutation)": func() error {
			_, err := r.CheckAndMutate(&CheckAndMutate{Row: b("a"), Family: fam, Qualifier: b("q"), Mutations: []Mutation{nilPut}})
			return err
		},
		"Put without cells": func() error { return r.Put(NewPut(b("a"))) },
	}
	for name, call := range calls {
		var err error
		require.NotPanics(t, func() { err = call() }, name)
		require.Error(t, err, name)
		require.True(t, errors.Is(err, ErrInvalidArgument), "%s: %v", name, err)
	}
	// Nothing was written by the refused batch, and the region works.
	res, err := r.Get(NewGet(b("a")))
	require.NoError(t, err)
	require.True(t, res.IsEmpty())
	res, err = r.GetInto(NewGet(b("a")), nil)
	require.NoError(t, err)
	require.NotNil(t, res)
	require.NoError(t, r.Delete(NewDelete(b("a"))), "a Delete without cells deletes the row")
}

// TestPanicDuringCommit: a panic between the MVCC begin and the memstore
// insert completes the write's entry on the way out, so the read point
// moves on and later writes become visible instead of waiting forever.
func TestPanicDuringCommit(t *testing.T) {
	r := openTest(t, t.TempDir(), nil)
	defer r.Close()
	commitHook = func() { panic("injected") }
	require.Panics(t, func() { _ = r.Put(NewPut(b("x")).Add(fam, b("q"), b("lost"))) })
	commitHook = nil
	done := make(chan error, 1)
	go func() { done <- r.Put(NewPut(b("y")).Add(fam, b("q"), b("v"))) }()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("a Put after the panic never completed: the read point is stuck")
	}
	res, err := r.Get(NewGet(b("y")))
	require.NoError(t, err)
	require.Equal(t, b("v"), res.Value(fam, b("q")))

	// Again behind a write in flight: the panicking write's entry is
	// completed but not retired, and stays in the write queue, so its
	// scratch must not be pooled for the next write to begin it again
	// (mvcc would refuse: an assertion failure).
	ahead := r.mvcc.Begin()
	commitHook = func() { panic("injected") }
	require.Panics(t, func() { _ = r.Put(NewPut(b("x")).Add(fam, b("q"), b("lost"))) })
	commitHook = nil
	go func() {
		time.Sleep(20 * time.Millisecond)
		r.mvcc.Complete(ahead)
	}()
	for i := 0; i < 4; i++ {
		require.NotPanics(t, func() { err = r.Put(NewPut(b("z")).Add(fam, b("q"), b("v"))) })
		require.NoError(t, err)
	}
	res, err = r.Get(NewGet(b("z")))
	require.NoError(t, err)
	require.Equal(t, b("v"), res.Value(fam, b("q")))
}

// TestWALTornTailCounted: a torn last WAL record (here: the newest entry
// cut short, as a crash mid-write leaves it) is dropped at open and
// counted in Stats, so that operators see what a damaged newest record
// cost.
func TestWALTornTailCounted(t *testing.T) {
	dir := t.TempDir()
	r := openTest(t, dir, nil)
	require.NoError(t, r.Put(NewPut(b("kept")).Add(fam, b("q"), b("v1"))))
	require.NoError(t, r.Put(NewPut(b("torn")).Add(fam, b("q"), b("v2"))))
	// Copy the directory as a crash would leave it (nothing flushed), then
	// cut the newest record short.
	crashed := t.TempDir()
	require.NoError(t, os.CopyFS(crashed, os.DirFS(dir)))
	require.NoError(t, r.Close())
	segs, err := filepath.Glob(filepath.Join(crashed, "wal", "*"))
	require.NoError(t, err)
	require.NotEmpty(t, segs)
	last := segs[len(segs)-1]
	data, err := os.ReadFile(last)
	require.NoError(t, err)
	// A mapped segment ends in the zeros allocated ahead of its writes:
	// the newest record ends before them.
	end := len(bytes.TrimRight(data, "\x00"))
	require.NoError(t, os.Truncate(last, int64(end-3)))
	require.NoError(t, os.Remove(filepath.Join(crashed, ".lock")))
	r2, err := Open(crashed, Options{})
	require.NoError(t, err)
	defer r2.Close()
	stats := r2.Stats()
	require.EqualValues(t, 1, stats.WALTornTails)
	require.Greater(t, stats.WALTornBytes, int64(0))
	res, err := r2.Get(NewGet(b("kept")))
	require.NoError(t, err)
	require.Equal(t, b("v1"), res.Value(fam, b("q")))
	res, err = r2.Get(NewGet(b("torn")))
	require.NoError(t, err)
	require.True(t, res.IsEmpty(), "the torn newest entry is dropped")
}

// TestContextEndsWaits: a context's deadline, sooner than RowLockWait,
// ends the wait for a row lock; a cancelled context ends it at once.
func TestContextEndsWaits(t *testing.T) {
	r := openTest(t, t.TempDir(), func(o *Options) { o.RowLockWait = 30 * time.Second })
	defer r.Close()
	// Hold the row's exclusive lock, as a long read-modify-write would.
	rl, err := r.locks.lock(context.Background(), b("busy"), true, time.Second, nil)
	require.NoError(t, err)
	defer r.locks.unlock(rl, true)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	err = r.PutContext(ctx, NewPut(b("busy")).Add(fam, b("q"), b("v")))
	require.True(t, errors.Is(err, ErrRowLockTimeout), "%v", err)
	require.Less(t, time.Since(start), 10*time.Second, "the call's deadline, not RowLockWait, ended the wait")
	gone, cancelNow := context.WithCancel(context.Background())
	cancelNow()
	_, err = r.IncrementContext(gone, NewIncrement(b("busy")).Add(fam, b("n"), 1))
	require.True(t, errors.Is(err, ErrRowLockTimeout), "%v", err)
	// Other rows are not waited for.
	require.NoError(t, r.PutContext(ctx, NewPut(b("free")).Add(fam, b("q"), b("v"))))
}

// TestWritesAcrossRegions has writers that alternate between two regions,
// as a server's handlers do between its regions: a write's mvcc entry is
// in the pooled write scratch, so one entry is begun in one region's write
// queue and then in the other's, whose write numbers are counted apart,
// while the first queue may still hold it. Every write must be visible
// once acknowledged, in its own region only, and no write may wait for
// ever.
func TestWritesAcrossRegions(t *testing.T) {
	rs := [2]*Region{openTest(t, t.TempDir(), nil), openTest(t, t.TempDir(), nil)}
	defer rs[0].Close()
	defer rs[1].Close()
	const writers, perWriter = 8, 300
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < perWriter; i++ {
				r := rs[(w+i)%2]
				row := fmt.Appendf(nil, "w%02d-%04d", w, i)
				if err := r.Put(NewPut(row).Add(fam, b("q"), row)); err != nil {
					errs <- err
					return
				}
				res, err := r.Get(NewGet(row))
				if err != nil {
					errs <- err
					return
				}
				if got := res.Value(fam, b("q")); !bytes.Equal(got, row) {
					errs <- fmt.Errorf("read %q back as %q", row, got)
					return
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("writers did not finish: a write waits for ever")
	}
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for i, r := range rs {
		rows, _ := scanAll(t, r, &Scan{})
		require.Len(t, rows, writers*perWriter/2, "rows in region %d", i)
	}
}
