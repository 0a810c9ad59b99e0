package region

// A bulk load cut short: by a power loss at each of its file operations in
// turn (crashfs), and by each of them failing (an error sweep). Either way
// the region must reopen with every file of the load in its store or none
// (and then every source still in place), and every write acknowledged
// before it intact.

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/hfile"
	"github.com/regionkv/regionkv/internal/vfs"
	"github.com/regionkv/regionkv/internal/vfs/crashfs"
	"github.com/regionkv/regionkv/internal/vfs/errorfs"
	"github.com/regionkv/regionkv/wal"
	"github.com/stretchr/testify/require"
)

func blCrashOptions(fs vfs.FS) Options {
	return Options{
		FS:                    fs,
		Families:              []FamilyOptions{{Name: "f"}, {Name: "g"}},
		Durability:            wal.FSyncWAL,
		DisableAutoCompaction: true,
		MajorCompactionPeriod: -1,
		Now:                   plNow,
		Logger:                slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
}

// blCrashRun is the region and the load of one cycle.
type blCrashRun struct {
	dir, src string
	files    []BulkLoadFile
	copy     bool
}

// setup writes what is acknowledged before the load (rows r000..r019
// "pre", flushed; r020..r029 "pre", only in the WAL) and the load's two
// files (rows r010..r039, at the writes' timestamps, so the load wins),
// and makes it all durable.
func (c *blCrashRun) setup(t *testing.T, fs *crashfs.FS) *Region {
	require.NoError(t, fs.MkdirAll(c.dir, 0o755))
	require.NoError(t, fs.MkdirAll(c.src, 0o755))
	r, err := Open(c.dir, blCrashOptions(fs))
	require.NoError(t, err)
	for i := 0; i < 30; i++ {
		row := fmt.Sprintf("r%03d", i)
		require.NoError(t, r.Put(NewPut(b(row)).AddAt(fam, plQual, 100, b("pre"+row)).AddAt(fam2, plQual, 100, b("pre"+row))))
		if i == 19 {
			require.NoError(t, r.Flush())
		}
	}
	c.files = nil
	for _, f := range []string{"f", "g"} {
		p := filepath.Join(c.src, f, "hfile")
		writeTestHFile(t, fs, p, f, blRows(10, 40, "bulk"+f, 100), hfile.WriterOptions{Compression: hfile.CompressionSnappy})
		c.files = append(c.files, BulkLoadFile{Family: f, Path: p})
	}
	fs.SyncAll()
	return r
}

// check reads the region reopened after the cycle: the load whole or not
// at all (loaded says which, if known: "yes" if the call returned, "no" if
// it failed and said nothing was loaded, "" if unknown), and the rest as
// acknowledged.
func (c *blCrashRun) check(t *testing.T, fs vfs.FS, r *Region, loaded, what string) bool {
	t.Helper()
	rows := map[string]int{}
	for i := 0; i < 40; i++ {
		row := fmt.Sprintf("r%03d", i)
		for _, f := range []string{"f", "g"} {
			got := string(getValue(t, r, row, f, "q"))
			switch {
			case i >= 10 && got == "bulk"+f+row:
				rows[f]++
			case i < 30 && got == "pre"+row:
			case i >= 30 && got == "":
			default:
				t.Fatalf("%s: %s/%s reads %q", what, row, f, got)
			}
		}
	}
	require.Equal(t, rows["f"], rows["g"], "%s: a load applied to one family only", what)
	all := rows["f"] == 30
	require.True(t, all || rows["f"] == 0, "%s: %d of 30 rows of the load", what, rows["f"])
	switch loaded {
	case "yes":
		require.True(t, all, "%s: an acknowledged load is gone", what)
	case "no":
		require.False(t, all, "%s: a load that failed came back", what)
	}
	if !all {
		// Nothing lost: every source is still there, whole.
		for _, f := range c.files {
			rd, file, err := r.openBulkLoadFile(f.Path)
			require.NoError(t, err, "%s: the source of a load that did not happen", what)
			require.Equal(t, uint64(30), rd.EntryCount())
			require.NoError(t, rd.Verify())
			rd.Close()
			file.Close()
		}
	}
	return all
}

func TestBulkLoadPowerLoss(t *testing.T) {
	root := t.TempDir()
	run := &blCrashRun{dir: filepath.Join(root, "region"), src: filepath.Join(root, "src")}
	require.NoError(t, os.MkdirAll(run.dir, 0o755)) // the lock is on the OS's filesystem
	step := int64(1)
	if testing.Short() {
		step = 3
	}
	seed := uint64(time.Now().UnixNano())
	if v, err := strconv.ParseUint(os.Getenv("REGIONKV_POWERLOSS_SEED"), 10, 64); err == nil {
		seed = v
	}
	rng := rand.New(rand.NewPCG(seed, 11))
	cycles, loadedCycles := 0, 0
	cuts := map[string]int{}
	// Each cut point three times (what survives of the unsynced state is
	// drawn at random), copying the files or moving them in turn.
	reps := int64(3)
	if testing.Short() {
		reps = 1
	}
	for i := int64(reps); ; i++ {
		n := i / reps * step
		fs := crashfs.New()
		r := run.setup(t, fs)
		run.copy = i%2 == 0
		fs.CrashAt(n, crashfs.Mutating, rng)
		_, err := r.BulkLoadHFiles(context.Background(), run.files, BulkLoadOptions{CopyFiles: run.copy})
		var crashed bool
		select {
		case <-fs.Crashed():
			crashed = true
		default:
		}
		if !crashed {
			require.NoError(t, err)
			require.NoError(t, r.Close())
			t.Logf("cycles=%d over the load's %d file operations (every %d, %d times each) loaded=%d cut at %v",
				cycles, n-1, step, reps, loadedCycles, cuts)
			require.Greater(t, n, int64(30), "the load makes more file operations than that")
			require.Positive(t, loadedCycles, "no cut landed after the load committed")
			require.Less(t, loadedCycles, cycles, "no cut landed before the load committed")
			return
		}
		cycles++
		at := fs.CrashedAt()
		kind, _, _ := strings.Cut(at, " ")
		cuts[kind]++
		loaded := ""
		if err == nil {
			loaded = "yes"
		}
		closeWithin(t, r, 10*time.Second)
		img := fs.Image()
		r2, err := Open(run.dir, blCrashOptions(img))
		require.NoError(t, err, "cycle %d (seed %d, power cut at %s): reopening: %+v", n, seed, at, err)
		if run.check(t, img, r2, loaded, fmt.Sprintf("cycle %d (seed %d, copy=%v, cut at %s)", n, seed, run.copy, at)) {
			loadedCycles++
		}
		require.NoError(t, r2.Close())
	}
}

// TestBulkLoadErrorSweep fails each file operation of a load in turn.
func TestBulkLoadErrorSweep(t *testing.T) {
	root := t.TempDir()
	run := &blCrashRun{dir: filepath.Join(root, "region"), src: filepath.Join(root, "src")}
	require.NoError(t, os.MkdirAll(run.dir, 0o755))
	step := int64(1)
	if testing.Short() {
		step = 3
	}
	failed := 0
	for n := int64(1); ; n += step {
		fs := crashfs.New()
		r := run.setup(t, fs)
		run.copy = n%2 == 1
		fs.FailAt(n, errorfs.OpAll)
		_, err := r.BulkLoadHFiles(context.Background(), run.files, BulkLoadOptions{CopyFiles: run.copy})
		injected, at := fs.Injected()
		what := fmt.Sprintf("op %d (copy=%v, failing %s)", n, run.copy, at)
		if injected == 0 {
			require.NoError(t, err)
			require.NoError(t, r.Close())
			t.Logf("swept %d file operations of a load (every %d); %d failed the load", n-1, step, failed)
			require.Greater(t, n, int64(50))
			return
		}
		loaded := "yes"
		if err != nil {
			failed++
			require.False(t, errors.HasAssertionFailure(err), "%s: %+v", what, err)
			loaded = "no"
			if strings.Contains(err.Error(), "completes when the region opens again") {
				loaded = "" // in the open region: none; reopened: all
			}
		}
		if loaded != "" {
			// The open region agrees with what the call said.
			run.check(t, fs, r, loaded, what+", before reopening")
			// And it goes on: a write is acknowledged.
			require.NoError(t, r.Put(NewPut(b("r099")).Add(fam, plQual, b("after"))), what)
		}
		within(t, 20*time.Second, what+": closing", func() { _ = r.Close() })
		r2, err := Open(run.dir, blCrashOptions(fs))
		require.NoError(t, err, "%s: reopening: %+v", what, err)
		got := run.check(t, fs, r2, loaded, what+", reopened")
		if loaded == "" {
			require.True(t, got, "%s: a load that could not be undone completes on reopening", what)
		}
		require.NoError(t, r2.Close())
	}
}
