package region

// The error-injection sweep, as Pebble's error_test.go: a small fixed
// workload runs on internal/vfs/crashfs with its ith file operation failing
// once (EIO), for i = 1, 2, ... until a run sees no failure (i is past the
// workload's last operation). Every run must finish or fail cleanly with an
// error, never panic or hang; the region is then reopened on the same
// filesystem (what a restart finds: nothing lost to a power cut, the fault
// gone) and must open and hold what was acknowledged.

import (
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/internal/vfs/crashfs"
	"github.com/regionkv/regionkv/internal/vfs/errorfs"
	"github.com/regionkv/regionkv/wal"
	"github.com/stretchr/testify/require"
)

func sweepOptions(fs *crashfs.FS) Options {
	// No background flush or compaction: the workload's operations, and so
	// their numbering, are the same in every run.
	return Options{
		FS:                    fs,
		Families:              []FamilyOptions{{Name: "f"}, {Name: "g"}},
		DisableAutoCompaction: true,
		MajorCompactionPeriod: -1,
		Now:                   plNow,
		Logger:                slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
}

// sweepRun is what one run of the workload did.
type sweepRun struct {
	// acked is each row's acknowledged value ("" deleted); failed, the
	// values of each row's failed writes since its last acknowledged one
	// (none of which may come back: see sweepCheck); errs, every error
	// the workload saw.
	acked  map[string]string
	failed map[string][]string
	errs   []error
}

func sweepValue(row string, gen int) string { return fmt.Sprintf("%s-gen%d-%0100d", row, gen, gen) }

// sweepWorkload: open, puts (FSYNC_WAL and SYNC_WAL), flush, more puts, a
// read, deletes, flush, major compaction, puts and deletes, close (which
// flushes). Each step's error is recorded and the workload goes on
// (a failed write's region is expected to recover); it stops only if Open
// fails.
func sweepWorkload(dir string, fs *crashfs.FS, run *sweepRun) {
	r, err := Open(dir, sweepOptions(fs))
	if err != nil {
		run.errs = append(run.errs, errors.Wrap(err, "open"))
		return
	}
	note := func(err error) {
		if err != nil {
			run.errs = append(run.errs, err)
		}
	}
	write := func(row, val string, d wal.Durability) {
		var err error
		if val == "" {
			del := NewDelete([]byte(row))
			del.Durability = d
			err = r.Delete(del)
		} else {
			p := NewPut([]byte(row)).Add(fam, plQual, []byte(val)).Add(fam2, plQual, []byte(val))
			p.Durability = d
			err = r.Put(p)
		}
		if err != nil {
			run.failed[row] = append(run.failed[row], val)
			note(errors.Wrapf(err, "write %s", row))
			return
		}
		run.acked[row] = val
		delete(run.failed, row)
	}
	row := func(i int) string { return fmt.Sprintf("row%02d", i) }
	for i := 0; i < 20; i++ {
		write(row(i), sweepValue(row(i), 1), wal.FSyncWAL)
	}
	note(r.Flush())
	for i := 10; i < 30; i++ {
		write(row(i), sweepValue(row(i), 2), wal.SyncWAL)
	}
	if res, err := r.Get(NewGet([]byte(row(5)))); err == nil {
		// A read that succeeds is right.
		if got, want := string(res.Value(fam, plQual)), run.acked[row(5)]; got != want && len(run.failed[row(5)]) == 0 {
			note(errors.AssertionFailedf("read %s: got %.20q, want %.20q", row(5), got, want))
		}
	} else {
		note(err)
	}
	for i := 0; i < 6; i++ {
		write(row(i), "", wal.FSyncWAL)
	}
	note(r.Flush())
	note(r.Compact(true))
	for i := 0; i < 3; i++ {
		write(row(i), sweepValue(row(i), 3), wal.FSyncWAL)
	}
	for i := 25; i < 28; i++ {
		write(row(i), "", wal.SyncWAL)
	}
	note(r.Close()) // which flushes

}

// TestErrorSweep fails the ith file operation of the workload, for every i
// (every 7th under -short), and checks each run.
func TestErrorSweep(t *testing.T) {
	dir := t.TempDir()
	step := int64(1)
	if testing.Short() {
		step = 7
	}
	start := time.Now()
	swept, failedRuns := int64(0), 0
	kinds := map[string]int{} // failed operations by kind
	for i := int64(1); ; i += step {
		fs := crashfs.New()
		require.NoError(t, fs.MkdirAll(dir, 0o755))
		fs.SyncAll()
		base := fs.Ops()
		fs.FailAt(i, errorfs.OpAll)
		run := &sweepRun{acked: map[string]string{}, failed: map[string][]string{}}
		within(t, 20*time.Second, fmt.Sprintf("the workload with operation %d failing", i), func() {
			sweepWorkload(dir, fs, run)
		})
		total := fs.Ops() - base
		injected, at := fs.Injected()
		if injected == 0 {
			// i is past the last operation: the run was clean.
			require.Empty(t, run.errs, "a run without failures")
			swept = total
			break
		}
		kind, _, _ := strings.Cut(at, " ")
		kinds[kind]++
		if len(run.errs) > 0 {
			failedRuns++
		}
		for _, err := range run.errs {
			// The one failure may surface more than once (a flush, then
			// the close that flushes again), but every error is it or
			// caused by it: nothing else went wrong.
			require.False(t, errors.HasAssertionFailure(err), "op %d: %+v", i, err)
		}
		within(t, 20*time.Second, fmt.Sprintf("reopening after operation %d failed", i), func() {
			sweepCheck(t, dir, fs, run, i)
		})
	}
	var byKind []string
	for k, n := range kinds {
		byKind = append(byKind, fmt.Sprintf("%s=%d", k, n))
	}
	sort.Strings(byKind)
	// The runs that saw no error absorbed the failure: a failed close of
	// a file read, say, or a flush retried by the close.
	t.Logf("swept %d file operations (every %d: %s); %d runs returned an error, all clean; took %s",
		swept, step, strings.Join(byKind, " "), failedRuns, time.Since(start).Round(time.Millisecond))
	require.Greater(t, swept, int64(100))
}

// sweepCheck reopens the region on fs without failures and checks every row:
// the acknowledged value, or (after a failed write of the row) the value
// before it: a failed put never comes back, and a failed delete leaves the
// row as it was.
func sweepCheck(t *testing.T, dir string, fs *crashfs.FS, run *sweepRun, op int64) {
	r, err := Open(dir, sweepOptions(fs))
	require.NoError(t, err, "op %d: reopening: %+v", op, err)
	defer func() { require.NoError(t, r.Close()) }()
	for i := 0; i < 30; i++ {
		row := fmt.Sprintf("row%02d", i)
		res, err := r.Get(NewGet([]byte(row)))
		require.NoError(t, err)
		got, got2 := string(res.Value(fam, plQual)), string(res.Value(fam2, plQual))
		require.Equal(t, got, got2, "op %d: %s: the families disagree", op, row)
		require.Equal(t, run.acked[row], got, "op %d: %s (failed writes %.20q; errors %v)", op, row, run.failed[row], run.errs)
	}
}

// within runs f and fails the test if it panics or does not return within d.
func within(t *testing.T, d time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan any, 1)
	go func() {
		defer func() { done <- recover() }()
		f()
	}()
	select {
	case p := <-done:
		if p != nil {
			t.Fatalf("%s: panic: %v", what, p)
		}
	case <-time.After(d):
		buf := make([]byte, 1<<20)
		t.Fatalf("%s: hung:\n%s", what, buf[:runtime.Stack(buf, true)])
	}
}
