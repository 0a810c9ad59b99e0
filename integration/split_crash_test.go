package integration

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/regionkv/regionkv/client"
)

// TestSplitKillLoop is the crash loop with regions splitting and merging
// all the time: the crash loop's writers (puts, deletes, increments,
// check-and-puts) run against a real regionsrv while a splitter splits
// random regions at random rows and merges neighbours, and the server also
// splits by itself (small memstores: SteppingSplitPolicy's first split
// comes early); the server is killed with SIGKILL at random moments,
// often in the middle of a split or merge, and restarted. After each
// restart the table's regions must tile its rows (the parent or both
// daughters, never both or neither), and every acknowledged write must read
// back with nothing deleted coming back.
//
// REGIONKV_CRASH_CYCLES sets the number of cycles (12; 5 with -short).
func TestSplitKillLoop(t *testing.T) {
	cycles := 12
	if testing.Short() {
		cycles = 5
	}
	if s := os.Getenv("REGIONKV_CRASH_CYCLES"); s != "" {
		var err error
		if cycles, err = strconv.Atoi(s); err != nil {
			t.Fatalf("REGIONKV_CRASH_CYCLES: %v", err)
		}
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("REGIONKV_CRASH_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d (REGIONKV_CRASH_SEED reruns it)", seed)
	rng := rand.New(rand.NewPCG(seed, 5))
	dir := t.TempDir()
	p := startServer(t, dir, "hbase.hregion.memstore.flush.size=65536")
	ctx := context.Background()
	c := newClient(t, p)
	if err := c.CreateTable(ctx, client.TableDescriptor{Name: crashTable, Families: []client.Family{{Name: "f"}}}, nil); err != nil {
		t.Fatal(err)
	}
	writers := make([]*crashWriter, crashWriters)
	for i := range writers {
		writers[i] = &crashWriter{id: i}
	}
	var total crashCheck
	var splits, merges, midSplit atomic.Int64
	done := 0
	for cycle := 0; cycle < cycles; cycle++ {
		wctx, stop := context.WithCancel(ctx)
		var wg sync.WaitGroup
		for i, w := range writers {
			wg.Add(1)
			go func(w *crashWriter, seed uint64) {
				defer wg.Done()
				w.run(wctx, c, rand.New(rand.NewPCG(seed, uint64(cycle))))
			}(w, rng.Uint64()+uint64(i))
		}
		var inOp atomic.Bool
		wg.Add(1)
		go func(r *rand.Rand) {
			defer wg.Done()
			for wctx.Err() == nil {
				time.Sleep(time.Duration(r.IntN(40)) * time.Millisecond)
				regions, err := c.Regions(wctx, crashTable)
				if err != nil {
					continue
				}
				inOp.Store(true)
				if len(regions) < 6 || r.IntN(3) > 0 {
					reg := regions[r.IntN(len(regions))]
					if row := splitRowIn(r, reg); row != nil {
						if err := c.SplitRegion(wctx, reg.Name, row); err == nil {
							splits.Add(1)
						}
					}
				} else {
					i := r.IntN(len(regions) - 1)
					if err := c.MergeRegions(wctx, false, regions[i].Name, regions[i+1].Name); err == nil {
						merges.Add(1)
					}
				}
				inOp.Store(false)
			}
		}(rand.New(rand.NewPCG(rng.Uint64(), 9)))
		time.Sleep(time.Duration(300+rng.IntN(900)) * time.Millisecond)
		p.kill()
		if inOp.Load() {
			midSplit.Add(1)
		}
		stop()
		wg.Wait()
		p.start()

		vctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		regions, err := c.Regions(vctx, crashTable)
		if err != nil {
			cancel()
			t.Fatalf("cycle %d: the table's regions after restart: %v\nserver log:\n%s", cycle, err, p.log())
		}
		if err := tiles(regions); err != nil {
			t.Errorf("cycle %d: %v", cycle, err)
		}
		var cc crashCheck
		for _, w := range writers {
			if err := w.verify(vctx, c, &cc); err != nil {
				cancel()
				t.Fatalf("cycle %d: reading back after restart: %v\nserver log:\n%s", cycle, err, p.log())
			}
		}
		cancel()
		for _, d := range cc.details {
			t.Errorf("cycle %d: %s", cycle, d)
		}
		total.lost += cc.lost
		total.resurrected += cc.resurrected
		total.wrong += cc.wrong
		done++
	}
	fmt.Printf("cycles=%d lost=%d resurrected=%d\n", done, total.lost, total.resurrected)
	t.Logf("cycles=%d lost=%d resurrected=%d wrong=%d splits=%d merges=%d kills during a split or merge call=%d",
		done, total.lost, total.resurrected, total.wrong, splits.Load(), merges.Load(), midSplit.Load())
	if splits.Load() == 0 {
		t.Error("no split succeeded: the loop did not exercise splits")
	}
}

// splitRowIn returns one of the writers' rows strictly inside region r, nil
// if it finds none.
func splitRowIn(rng *rand.Rand, r client.RegionInfo) []byte {
	for try := 0; try < 20; try++ {
		row := []byte(fmt.Sprintf("w%d-r%03d", rng.IntN(crashWriters), rng.IntN(crashRows)))
		if bytes.Compare(row, r.StartKey) > 0 && (len(r.EndKey) == 0 || bytes.Compare(row, r.EndKey) < 0) {
			return row
		}
	}
	return nil
}

// tiles checks that regions, as hbase:meta lists them, cover the table's
// rows exactly once.
func tiles(regions []client.RegionInfo) error {
	if len(regions) == 0 {
		return fmt.Errorf("no regions")
	}
	if len(regions[0].StartKey) != 0 || len(regions[len(regions)-1].EndKey) != 0 {
		return fmt.Errorf("regions do not reach both ends of the table: %q .. %q", regions[0].StartKey, regions[len(regions)-1].EndKey)
	}
	for i := 1; i < len(regions); i++ {
		if !bytes.Equal(regions[i-1].EndKey, regions[i].StartKey) {
			return fmt.Errorf("regions %s and %s do not meet: a parent and a daughter both serve, or neither", regions[i-1].Name, regions[i].Name)
		}
	}
	return nil
}
