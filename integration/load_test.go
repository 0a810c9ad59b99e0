package integration

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/regionkv/regionkv/client"
)

// Load test figures: 200 connections (one client each) with mixed traffic
// against one server process, whose resident memory must stay within what
// it is configured to hold plus a stated overhead.
const (
	loadClients      = 200
	loadCacheMB      = 32
	loadFlushMB      = 4
	loadBlockingMult = 4
	loadRegions      = 4
	// loadOverheadMB is the memory we state the server needs beyond its
	// memstores and block cache: Go runtime and GC headroom (the heap may
	// reach twice the live data before a collection), 200 connections'
	// buffers, scanners, the hbase:meta and namespace regions, and code.
	loadOverheadMB = 200
)

func TestLoad200Connections(t *testing.T) {
	duration := 10 * time.Second
	if testing.Short() {
		duration = 4 * time.Second
	}
	if s := os.Getenv("REGIONKV_LOAD_DURATION"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatal(err)
		}
		duration = d
	}
	p := startServer(t, "",
		fmt.Sprintf("hfile.block.cache.size=%dm", loadCacheMB),
		fmt.Sprintf("hbase.hregion.memstore.flush.size=%d", loadFlushMB<<20),
		fmt.Sprintf("hbase.hregion.memstore.block.multiplier=%d", loadBlockingMult))
	admin := newClient(t, p)
	ctx := context.Background()
	const tbl = "load"
	if err := admin.CreateTable(ctx, client.TableDescriptor{Name: tbl, Families: []client.Family{{Name: "f"}}},
		[][]byte{[]byte("k2"), []byte("k5"), []byte("k7")}); err != nil {
		t.Fatal(err)
	}
	base := scrape(t, p)
	baseGoroutines := base["go_goroutines"]

	clients := make([]*client.Client, loadClients)
	for i := range clients {
		c, err := client.New(ctx, client.Options{ZKQuorum: zk.Addr(), ZKRoot: p.root, Timeout: 30 * time.Second})
		if err != nil {
			t.Fatalf("client %d: %v", i, err)
		}
		clients[i] = c
	}
	var (
		ops, errs atomic.Int64
		firstErr  atomic.Pointer[error]
		peakRSS   atomic.Int64
		wg        sync.WaitGroup
	)
	stop := make(chan struct{})
	sampler := make(chan struct{})
	go func() {
		defer close(sampler)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			if kb := rssKB(p.cmd.Process.Pid); kb > peakRSS.Load() {
				peakRSS.Store(kb)
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	deadline := time.Now().Add(duration)
	for i, c := range clients {
		wg.Add(1)
		go func(id int, c *client.Client) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(id), 9))
			val := bytes.Repeat([]byte{byte('a' + id%26)}, 512)
			for time.Now().Before(deadline) {
				row := []byte(fmt.Sprintf("k%d-%05d", rng.IntN(10), rng.IntN(2000)))
				var err error
				octx, cancel := context.WithTimeout(ctx, 30*time.Second)
				switch n := rng.IntN(10); {
				case n < 4:
					_, err = c.Mutate(octx, client.NewPut(tbl, row).Add([]byte("f"), []byte("q"), val))
				case n < 8:
					_, err = c.Get(octx, &client.Get{Table: tbl, Row: row})
				case n < 9:
					_, err = c.IncrementColumn(octx, tbl, row, []byte("f"), []byte("n"), 1)
				default:
					sc := c.Scan(&client.Scan{Table: tbl, StartRow: row, Limit: 20, Caching: 20})
					for k := 0; k < 20; k++ {
						if _, err = sc.Next(octx); err != nil {
							break
						}
					}
					if errors.Is(err, io.EOF) {
						err = nil // fewer than 20 rows left
					}
					sc.Close()
				}
				cancel()
				ops.Add(1)
				if err != nil {
					errs.Add(1)
					firstErr.CompareAndSwap(nil, &err)
				}
			}
		}(i, c)
	}
	wg.Wait()
	close(stop)
	<-sampler
	during := scrape(t, p)
	for _, c := range clients {
		c.Close()
	}
	admin.Close()

	// Once the clients are gone, so are their connections and goroutines.
	var after map[string]float64
	settled := false
	for end := time.Now().Add(15 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		after = scrape(t, p)
		if after["hbase_regionserver_numOpenConnections"] <= 1 && after["go_goroutines"] <= baseGoroutines+5 {
			settled = true
			break
		}
	}
	peakMB := float64(peakRSS.Load()) / 1024
	limitMB := float64(loadRegions*loadFlushMB*loadBlockingMult + loadCacheMB + loadOverheadMB)
	t.Logf("clients=%d duration=%v ops=%d (%.0f ops/s) errors=%d peak connections=%.0f peak RSS=%.0f MB (limit %.0f MB = memstores %d + block cache %d + overhead %d) goroutines before=%.0f after=%.0f",
		loadClients, duration, ops.Load(), float64(ops.Load())/duration.Seconds(), errs.Load(),
		during["hbase_regionserver_numOpenConnections"], peakMB, limitMB,
		loadRegions*loadFlushMB*loadBlockingMult, loadCacheMB, loadOverheadMB, baseGoroutines, after["go_goroutines"])
	if n := errs.Load(); n > 0 {
		t.Errorf("%d of %d operations failed; first: %v", n, ops.Load(), *firstErr.Load())
	}
	if during["hbase_regionserver_numOpenConnections"] < loadClients {
		t.Errorf("only %.0f connections open during the run, want %d", during["hbase_regionserver_numOpenConnections"], loadClients)
	}
	if !settled {
		t.Errorf("after the clients closed: %.0f connections open, %.0f goroutines (%.0f before): a leak",
			after["hbase_regionserver_numOpenConnections"], after["go_goroutines"], baseGoroutines)
	}
	if peakMB > limitMB {
		t.Errorf("peak RSS %.0f MB over the stated bound of %.0f MB", peakMB, limitMB)
	}
}

// rssKB returns a process's resident set size in KiB (Linux), 0 if unknown.
func rssKB(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			return n
		}
	}
	return 0
}
