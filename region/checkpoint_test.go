package region

import (
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/internal/vfs/crashfs"
	"github.com/stretchr/testify/require"
)

// cellMap returns row/family/qualifier -> value of every cell the region
// returns (newest version of each column).
func cellMap(t *testing.T, r *Region) map[string]string {
	t.Helper()
	sc, err := r.NewScanner(&Scan{})
	require.NoError(t, err)
	defer sc.Close()
	out := map[string]string{}
	for {
		res, err := sc.Next()
		require.NoError(t, err)
		if res == nil {
			return out
		}
		for _, c := range res.Cells {
			out[string(c.Row)+"/"+string(c.Family)+":"+string(c.Qualifier)] = string(c.Value)
		}
	}
}

// TestCheckpoint: a checkpoint holds what the region held at the call,
// flushed and unflushed (SKIP_WAL too), opens without options, and lives
// apart from the region: writes to either do not reach the other, and a
// major compaction of the region (which removes its names of the linked
// files) leaves the checkpoint readable.
func TestCheckpoint(t *testing.T) {
	dir := t.TempDir()
	r := openTest(t, filepath.Join(dir, "r"), nil)
	defer r.Close()
	for i := range 50 {
		require.NoError(t, r.Put(NewPut(b(fmt.Sprintf("row%02d", i))).Add(fam, b("q"), b(fmt.Sprintf("v%d", i))).Add(fam2, b("q"), b("w"))))
		if i%20 == 19 {
			require.NoError(t, r.Flush())
		}
	}
	require.NoError(t, r.Delete(NewDelete(b("row07"))))
	p := NewPut(b("row99")).Add(fam, b("q"), b("memstore only"))
	p.Durability = SkipWAL
	require.NoError(t, r.Put(p))
	want := cellMap(t, r)
	require.Equal(t, "memstore only", want["row99/f:q"])
	require.NotContains(t, want, "row07/f:q")

	cp := filepath.Join(dir, "cp")
	require.NoError(t, r.Checkpoint(cp))
	err := r.Checkpoint(cp)
	require.True(t, errors.Is(err, ErrInvalidArgument), "a checkpoint into an existing directory: %v", err)

	// The region goes on: more writes, a major compaction that drops the
	// files the checkpoint links.
	for i := range 10 {
		require.NoError(t, r.Put(NewPut(b(fmt.Sprintf("row%02d", i))).Add(fam, b("q"), b("after"))))
	}
	require.NoError(t, r.Flush())
	require.NoError(t, r.Compact(true))
	require.Equal(t, 1, len(r.Store("f").Files()))

	c, err := Open(cp, Options{})
	require.NoError(t, err, "the checkpoint opens with its stored families")
	defer c.Close()
	require.Equal(t, want, cellMap(t, c))
	require.Equal(t, r.Families(), c.Families())

	// Writes to the copy stay in the copy.
	require.NoError(t, c.Put(NewPut(b("row00")).Add(fam, b("q"), b("copy"))))
	require.NoError(t, c.Flush())
	require.NoError(t, c.Compact(true))
	require.Equal(t, "after", string(getValue(t, r, "row00", "f", "q")))
	require.Equal(t, "copy", string(getValue(t, c, "row00", "f", "q")))
	require.Equal(t, "v1", string(getValue(t, c, "row01", "f", "q")))

	// Closed regions cannot be checkpointed.
	require.NoError(t, r.Close())
	require.True(t, errors.Is(r.Checkpoint(filepath.Join(dir, "cp2")), ErrClosed))
}

// TestCheckpointUnderWrites: checkpoints taken while writers run batches
// across both families hold every batch whole or not at all, and every
// batch acknowledged before the checkpoint began.
func TestCheckpointUnderWrites(t *testing.T) {
	dir := t.TempDir()
	r := openTest(t, filepath.Join(dir, "r"), func(o *Options) {
		o.FlushSize = 16 << 10 // flushes and compactions run during the checkpoints
		o.CompactionMin = 2
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	})
	defer r.Close()
	var acked atomic.Int64 // batches 0..acked-1 are acknowledged
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			row := b(fmt.Sprintf("row%06d", i))
			v := b(fmt.Sprintf("%d:%0200d", i, i))
			ms := []Mutation{NewPut(row).Add(fam, b("q"), v), NewPut(append(row, 'x')).Add(fam2, b("q"), v)}
			if err := r.Batch(ms); err != nil {
				t.Error(err)
				return
			}
			acked.Store(int64(i + 1))
		}
	}()
	rounds := 6
	if testing.Short() {
		rounds = 3
	}
	for n := range rounds {
		time.Sleep(20 * time.Millisecond)
		before := acked.Load()
		cp := filepath.Join(dir, fmt.Sprintf("cp%d", n))
		require.NoError(t, r.Checkpoint(cp))
		c, err := Open(cp, Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		require.NoError(t, err)
		got := cellMap(t, c)
		require.NoError(t, c.Close())
		rows := 0
		for i := int64(0); ; i++ {
			k := fmt.Sprintf("row%06d", i)
			_, inF := got[k+"/f:q"]
			_, inG := got[k+"x/g:q"]
			require.Equal(t, inF, inG, "checkpoint %d: batch %d half there", n, i)
			if !inF {
				require.GreaterOrEqual(t, i, before, "checkpoint %d lost acknowledged batch %d", n, i)
				break
			}
			rows++
		}
		require.Equal(t, 2*rows, len(got), "checkpoint %d holds a prefix of the batches", n)
	}
	close(stop)
	wg.Wait()
}

// TestCheckpointPowerLoss cuts the power at every file operation of a
// checkpoint (on crashfs): the image either has no checkpoint directory or
// one that opens with the region's data, and the region itself always
// reopens with its data. A checkpoint that returned is durable.
func TestCheckpointPowerLoss(t *testing.T) {
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	base := t.TempDir() // the region's lock file lives here, on the OS filesystem
	dir, cp := filepath.Join(base, "r"), filepath.Join(base, "cp")
	setup := func() (*crashfs.FS, *Region, map[string]string) {
		fs := crashfs.New()
		r, err := Open(dir, Options{FS: fs, Families: []FamilyOptions{{Name: "f"}, {Name: "g"}}, Logger: logger})
		require.NoError(t, err)
		for i := range 30 {
			p := NewPut(b(fmt.Sprintf("row%02d", i))).Add(fam, b("q"), b("v")).Add(fam2, b("q"), b("w"))
			p.Durability = FSyncWAL
			require.NoError(t, r.Put(p))
			if i == 14 {
				require.NoError(t, r.Flush())
			}
		}
		return fs, r, cellMap(t, r)
	}
	// A checkpoint that returned is durable.
	fs, r, _ := setup()
	require.NoError(t, r.Checkpoint(cp))
	img := fs.Crash(rand.New(rand.NewPCG(1, 1)))
	r.Close()
	c, err := Open(cp, Options{FS: img, Logger: logger})
	require.NoError(t, err, "a checkpoint that returned survives the power loss")
	require.Len(t, cellMap(t, c), 60)
	require.NoError(t, c.Close())

	// The nth mutating operation of the checkpoint cuts the power, for
	// every n until one run completes.
	complete, absent, total := 0, 0, 0
	for n := int64(1); ; n++ {
		fs, r, want := setup()
		fs.CrashAt(n, crashfs.Mutating, rand.New(rand.NewPCG(uint64(n), 2)))
		err := r.Checkpoint(cp)
		select {
		case <-fs.Crashed():
		default:
			require.NoError(t, err)
			require.NoError(t, r.Close())
			total = int(n - 1)
		}
		if total > 0 {
			break
		}
		require.Error(t, err, "cut %d: %s", n, fs.CrashedAt())
		r.Close()
		img := fs.Image()
		if _, err := img.Stat(cp); err == nil {
			c, err := Open(cp, Options{FS: img, Logger: logger})
			require.NoError(t, err, "cut at %s", fs.CrashedAt())
			require.Equal(t, want, cellMap(t, c), "cut at %s: the checkpoint is not the region's data", fs.CrashedAt())
			require.NoError(t, c.Close())
			complete++
		} else {
			require.True(t, errors.Is(err, os.ErrNotExist), "%v", err)
			absent++
		}
		r2, err := Open(dir, Options{FS: img, Logger: logger})
		require.NoError(t, err, "cut at %s: the region reopens", fs.CrashedAt())
		require.Equal(t, want, cellMap(t, r2), "cut at %s", fs.CrashedAt())
		require.NoError(t, r2.Close())
	}
	require.Greater(t, total, 10)
	t.Logf("cuts=%d checkpoint complete=%d absent=%d", total, complete, absent)
	require.Greater(t, absent, 0)
	require.Equal(t, total, complete+absent)
}

// TestLinkClosedStoreFiles: the files of a closed region are the ones Open
// would load: a compaction's inputs left beside its output (a crash
// between publishing and removing) are not linked, and the region
// directory is not changed.
func TestLinkClosedStoreFiles(t *testing.T) {
	dir := t.TempDir()
	rdir := filepath.Join(dir, "r")
	r := openTest(t, rdir, func(o *Options) { o.CompactionMin = 100 })
	for i := range 3 {
		require.NoError(t, r.Put(NewPut(b(fmt.Sprintf("row%d", i))).Add(fam, b("q"), b("v"))))
		require.NoError(t, r.Flush())
	}
	saved, err := r.LinkStoreFiles(filepath.Join(dir, "inputs"), false)
	require.NoError(t, err)
	require.Len(t, saved[0].Files, 3)
	require.NoError(t, r.Compact(true))
	out := r.Store("f").Files()
	require.Len(t, out, 1)
	require.NoError(t, r.Close())
	// Put the inputs back, as a crash before their removal leaves them.
	for _, f := range saved[0].Files {
		require.NoError(t, DefaultFS.Link(filepath.Join(dir, "inputs", "f", f.Name), filepath.Join(rdir, "f", f.Name)))
	}
	got, err := LinkClosedStoreFiles(DefaultFS, rdir, filepath.Join(dir, "snap"), []string{"g", "f"})
	require.NoError(t, err)
	require.Len(t, got, 2)
	require.Equal(t, "f", got[0].Family)
	require.Equal(t, []LinkedFile{{Name: filepath.Base(out[0].Path), Size: out[0].Size()}}, got[0].Files)
	require.Equal(t, "g", got[1].Family)
	require.Empty(t, got[1].Files)
	names, err := DefaultFS.List(filepath.Join(rdir, "f"))
	require.NoError(t, err)
	require.Len(t, names, 4, "the region directory is not changed")
	names, err = DefaultFS.List(filepath.Join(dir, "snap", "f"))
	require.NoError(t, err)
	require.Equal(t, []string{filepath.Base(out[0].Path)}, names)
}
