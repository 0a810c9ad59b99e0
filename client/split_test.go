package client

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/ipc"
	"github.com/regionkv/regionkv/server"
	"github.com/stretchr/testify/require"
)

// retryNotYet repeats a split or merge while the server refuses it only
// because a region still reads its parent's files by reference (the
// daughters compact them away in the background).
func retryNotYet(t *testing.T, op func() error) error {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		err := op()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		if !IsException(err, ipc.ClassDoNotRetryIOException) && !IsException(err, ipc.ClassMergeRegionException) {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestSplitAndMerge: SplitTable at a row and without one, SplitRegion,
// MergeRegions and the switches, through the client, with every row
// readable by Get and by scans forward and reversed across the new
// boundaries.
func TestSplitAndMerge(t *testing.T) {
	c := newClient(t, nil)
	tbl := newTable(t, c)
	var rows []string
	var actions []Action
	for i := 0; i < 500; i++ {
		row := fmt.Sprintf("row%04d", i)
		rows = append(rows, row)
		actions = append(actions, NewPut(tbl, []byte(row)).Add(cf, qa, bytes.Repeat([]byte{'v'}, 300)))
	}
	res, err := c.Batch(ctx(t), actions)
	require.NoError(t, err)
	for _, r := range res {
		require.NoError(t, r.Err)
	}
	require.NoError(t, c.FlushTable(ctx(t), tbl))
	check := func(what string) {
		t.Helper()
		rs, _ := scanAll(t, c, &Scan{Table: tbl, Caching: 37})
		require.Equal(t, rows, rowsOf(rs), what)
		rs, _ = scanAll(t, c, &Scan{Table: tbl, Caching: 37, Reversed: true})
		require.Equal(t, reversed(rows), rowsOf(rs), what)
		for _, i := range []int{0, 199, 200, 201, 499} {
			require.False(t, get(t, c, &Get{Table: tbl, Row: []byte(rows[i])}).Empty(), "%s: row %s", what, rows[i])
		}
	}

	require.NoError(t, c.SplitTable(ctx(t), tbl, []byte("row0200")))
	regions, err := c.Regions(ctx(t), tbl)
	require.NoError(t, err)
	require.Len(t, regions, 2)
	require.Equal(t, "row0200", string(regions[1].StartKey))
	check("after SplitTable at row0200")

	err = c.SplitRegion(ctx(t), regions[1].Name, regions[1].StartKey)
	require.ErrorContains(t, err, "should not give a splitkey which equals to startkey")
	// Without a split row: each region at its best row, once its
	// references are compacted away.
	require.NoError(t, retryNotYet(t, func() error { return c.SplitTable(ctx(t), tbl, nil) }))
	regions, err = c.Regions(ctx(t), tbl)
	require.NoError(t, err)
	require.Len(t, regions, 4)
	check("after SplitTable without a split row")

	err = c.MergeRegions(ctx(t), false, regions[0].Name, regions[2].Name)
	require.True(t, IsException(err, ipc.ClassMergeRegionException), "%v", err)
	require.NoError(t, retryNotYet(t, func() error {
		return c.MergeRegions(ctx(t), false, regions[1].Name, []byte(regions[2].EncodedName))
	}))
	merged, err := c.Regions(ctx(t), tbl)
	require.NoError(t, err)
	require.Len(t, merged, 3)
	require.Equal(t, regions[1].StartKey, merged[1].StartKey)
	require.Equal(t, regions[2].EndKey, merged[1].EndKey)
	check("after a merge")
	require.NoError(t, retryNotYet(t, func() error {
		return c.MergeRegions(ctx(t), true, merged[2].Name, merged[0].Name, merged[1].Name)
	}))
	one, err := c.Regions(ctx(t), tbl)
	require.NoError(t, err)
	require.Len(t, one, 1)
	check("after merging all")

	// The split switch, off and on again.
	prev, err := c.SetSplitEnabled(ctx(t), false)
	require.NoError(t, err)
	require.True(t, prev)
	defer c.SetSplitEnabled(context.Background(), true)
	on, err := c.IsSplitEnabled(ctx(t))
	require.NoError(t, err)
	require.False(t, on)
	on, err = c.IsMergeEnabled(ctx(t))
	require.NoError(t, err)
	require.True(t, on)
	err = c.SplitTable(ctx(t), tbl, []byte("row0300"))
	require.True(t, IsException(err, ipc.ClassDoNotRetryIOException), "%v", err)
	require.ErrorContains(t, err, "split switch off")
	prev, err = c.SetSplitEnabled(ctx(t), true)
	require.NoError(t, err)
	require.False(t, prev)
	prev, err = c.SetMergeEnabled(ctx(t), true)
	require.NoError(t, err)
	require.True(t, prev)
}

// TestSplitUnderLoad splits and merges a table's regions over and over
// while writers write their own rows and readers scan the whole table
// forward and reversed and read rows back: no scan may miss a row
// acknowledged before it started, return one twice or out of order, and
// at the end every acknowledged row is there exactly once. Run with the
// race detector, it also checks the server's split path for data races.
func TestSplitUnderLoad(t *testing.T) {
	// A server of its own: the shared one's scanner lease is short, and
	// the switches are the server's.
	root := "/hbase-splitload"
	srv := startServerWith(t, root, nil)
	defer srv.Shutdown(context.Background())
	c := newClient(t, func(o *Options) { o.ZKRoot = root })
	tbl := newTable(t, c)
	const writers = 4
	ops, perWriter := 12, 3000
	if testing.Short() {
		ops, perWriter = 6, 1500
	}
	var acked [writers]atomic.Int64 // rows 0..acked-1 of each writer are written
	rowOf := func(w, i int) string { return fmt.Sprintf("w%d-%06d", w, i) }
	stop := make(chan struct{})
	var wg, writing sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		writing.Add(1)
		go func() {
			defer wg.Done()
			defer writing.Done()
			for i := 0; i < perWriter; i++ {
				select {
				case <-stop:
					return
				default:
				}
				row := rowOf(w, i)
				if _, err := c.Mutate(context.Background(), NewPut(tbl, []byte(row)).Add(cf, qa, bytes.Repeat([]byte(row), 20))); err != nil {
					t.Errorf("put %s: %v", row, err)
					return
				}
				acked[w].Store(int64(i + 1))
			}
		}()
	}
	var scans atomic.Int64
	for r := 0; r < 2; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(r), 3))
			for {
				select {
				case <-stop:
					return
				default:
				}
				var before [writers]int64
				for w := range before {
					before[w] = acked[w].Load()
				}
				rev := rng.IntN(2) == 0
				sc := c.Scan(&Scan{Table: tbl, Reversed: rev, Caching: 1 + rng.IntN(200)})
				seen := map[string]bool{}
				var last []byte
				for {
					res, err := sc.Next(context.Background())
					if err != nil {
						if !errors.Is(err, io.EOF) {
							t.Errorf("scan (reversed %v): %v", rev, err)
							return
						}
						break
					}
					row := res.Row()
					if last != nil && (bytes.Compare(row, last) > 0) == rev {
						t.Errorf("scan (reversed %v): %s after %s", rev, row, last)
					}
					if seen[string(row)] {
						t.Errorf("scan (reversed %v): %s twice", rev, row)
					}
					seen[string(row)] = true
					last = append(last[:0], row...)
				}
				for w, n := range before {
					for i := 0; i < int(n); i++ {
						if !seen[rowOf(w, i)] {
							t.Errorf("scan (reversed %v): acknowledged row %s missing", rev, rowOf(w, i))
							return
						}
					}
				}
				scans.Add(1)
				// A Get of a row acknowledged before.
				w := rng.IntN(writers)
				if n := acked[w].Load(); n > 0 {
					row := rowOf(w, rng.IntN(int(n)))
					g, err := c.Get(context.Background(), &Get{Table: tbl, Row: []byte(row)})
					if err != nil || g.Empty() {
						t.Errorf("get %s: %v, empty %v", row, err, g.Empty())
					}
				}
			}
		}()
	}
	wrote := make(chan struct{})
	go func() { writing.Wait(); close(wrote) }()
	rng := rand.New(rand.NewPCG(7, 7))
	splits, merges := 0, 0
	// Splits and merges while the writers write, and on until there were
	// enough of them.
	for done := 0; ; {
		select {
		case <-wrote:
			if done >= ops {
				goto finished
			}
		default:
		}
		time.Sleep(10 * time.Millisecond)
		regions, err := c.Regions(ctx(t), tbl)
		require.NoError(t, err)
		if len(regions) < 4 || rng.IntN(3) > 0 {
			r := regions[rng.IntN(len(regions))]
			err = c.SplitRegion(ctx(t), r.Name, nil)
			if err == nil {
				splits++
				done++
			}
		} else {
			i := rng.IntN(len(regions) - 1)
			err = c.MergeRegions(ctx(t), false, regions[i].Name, regions[i+1].Name)
			if err == nil {
				merges++
				done++
			}
		}
		// Refusals (too small, references not compacted yet) are fine.
		if err != nil && !IsException(err, ipc.ClassDoNotRetryIOException) && !IsException(err, ipc.ClassMergeRegionException) {
			t.Fatalf("split or merge: %v", err)
		}
	}
finished:
	close(stop)
	wg.Wait()
	require.Positive(t, splits)
	require.Positive(t, scans.Load())
	var want []string
	for w := 0; w < writers; w++ {
		for i := 0; i < int(acked[w].Load()); i++ {
			want = append(want, rowOf(w, i))
		}
	}
	rs, _ := scanAll(t, c, &Scan{Table: tbl, Caching: 500})
	require.Equal(t, want, rowsOf(rs))
	rs, _ = scanAll(t, c, &Scan{Table: tbl, Caching: 500, Reversed: true})
	require.Equal(t, reversed(want), rowsOf(rs))
	t.Logf("splits=%d merges=%d scans=%d rows=%d", splits, merges, scans.Load(), len(want))
}

// startServerWith starts a server of its own, registered under root in
// the shared ZooKeeper, with the properties props.
func startServerWith(t *testing.T, root string, props map[string]string) *server.Server {
	t.Helper()
	cfg := server.Config{DataDir: t.TempDir(), Host: "127.0.0.1", InfoPort: -1, ZKQuorum: zkAddr(t), ZKRoot: root,
		Logger: slog.New(slog.DiscardHandler)}
	require.NoError(t, cfg.Set("hbase.regionserver.port", "0"))
	for k, v := range props {
		require.NoError(t, cfg.Set(k, v))
	}
	srv, err := server.Start(cfg)
	require.NoError(t, err)
	return srv
}

// TestAutoSplitClient: a server whose flush size is small splits a table's
// only region by itself once it passes 2 × the flush size (HBase's
// SteppingSplitPolicy), and the client follows without the caller noticing.
func TestAutoSplitClient(t *testing.T) {
	root := "/hbase-autosplit"
	srv := startServerWith(t, root, map[string]string{"hbase.hregion.memstore.flush.size": "32768"})
	defer srv.Shutdown(context.Background())
	c := newClient(t, func(o *Options) { o.ZKRoot = root })
	tbl := newTable(t, c)
	var rows []string
	for i := 0; i < 1500; i++ {
		row := fmt.Sprintf("a%05d", i)
		rows = append(rows, row)
		_, err := c.Mutate(ctx(t), NewPut(tbl, []byte(row)).Add(cf, qa, bytes.Repeat([]byte{'x'}, 200)))
		require.NoError(t, err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		regions, err := c.Regions(ctx(t), tbl)
		require.NoError(t, err)
		if len(regions) > 1 {
			break
		}
		require.True(t, time.Now().Before(deadline), "the table never split")
		time.Sleep(10 * time.Millisecond)
	}
	rs, _ := scanAll(t, c, &Scan{Table: tbl})
	require.Equal(t, rows, rowsOf(rs))
	rs, _ = scanAll(t, c, &Scan{Table: tbl, Reversed: true})
	require.Equal(t, reversed(rows), rowsOf(rs))
}
