package region_test

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/regionkv/regionkv/blockcache"
	"github.com/regionkv/regionkv/blockcache/hfileadapter"
	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/hfile"
	"github.com/regionkv/regionkv/region"
	"github.com/stretchr/testify/require"
)

// Point-path benchmarks over a table like the peer harness's
// (../shared/bench/peers): keys user%010d in random order, 100-byte random
// values, one family f:v, FAST_DIFF + SNAPPY, ROW bloom, one major-compacted
// store file, HBase's LruBlockCache big enough for every block. One op is
// one Get, Put or Increment.
//
//	go test ./region -run '^$' -bench 'Get|Put|Increment' -benchmem

const pointBenchRows = 200_000

var (
	benchFam  = []byte("f")
	benchQual = []byte("v")
)

func benchKey(i int) []byte { return fmt.Appendf(nil, "user%010d", i) }

func benchFamily() region.FamilyOptions {
	return region.FamilyOptions{Name: "f", Encoding: encoding.EncodingFastDiff, Compression: hfile.CompressionSnappy}
}

// openPointTable writes (once per dir) and opens the harness-like table with
// a cache of cacheBytes.
func openPointTable(b *testing.B, dir string, cacheBytes int64) *region.Region {
	bo := blockcache.DefaultOptions()
	bo.Size = cacheBytes
	cache, err := hfileadapter.New(bo)
	require.NoError(b, err)
	b.Cleanup(func() { cache.Close() })
	r, err := region.Open(dir, region.Options{Table: "bench", Families: []region.FamilyOptions{benchFamily()},
		DisableAutoCompaction: true, BlockCache: cache})
	require.NoError(b, err)
	b.Cleanup(func() { r.Close() })
	if len(r.Store("f").Files()) == 0 {
		rng := rand.New(rand.NewPCG(1, 2))
		perm := rng.Perm(pointBenchRows)
		v := make([]byte, 100)
		for _, i := range perm {
			for j := range v {
				v[j] = byte(rng.Uint32())
			}
			require.NoError(b, r.Put(region.NewPut(benchKey(i)).Add(benchFam, benchQual, v)))
		}
		require.NoError(b, r.Flush())
		require.NoError(b, r.Compact(true))
	}
	return r
}

// BenchmarkGet reads random rows with every block cached (cache=all) and
// with a cache of a tenth of the data (cache=10pct), as the harness's
// randread workloads do.
func BenchmarkGet(b *testing.B) {
	dir := b.TempDir()
	var dataSize int64
	for _, c := range []string{"all", "10pct"} {
		b.Run("cache="+c, func(b *testing.B) {
			size := int64(1 << 30)
			if c == "10pct" {
				size = dataSize / 10
			}
			r := openPointTable(b, dir, size)
			for _, f := range r.Store("f").Files() {
				dataSize += f.Size()
			}
			rng := rand.New(rand.NewPCG(5, 6))
			g := &region.Get{}
			for i := 0; i < pointBenchRows; i++ { // warm the cache
				g.Row = benchKey(rng.IntN(pointBenchRows))
				if _, err := r.Get(g); err != nil {
					b.Fatal(err)
				}
			}
			keys := make([][]byte, 1<<16)
			for i := range keys {
				keys[i] = benchKey(rng.IntN(pointBenchRows))
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				g.Row = keys[i%len(keys)]
				res, err := r.Get(g)
				if err != nil {
					b.Fatal(err)
				}
				if len(res.Value(benchFam, benchQual)) != 100 {
					b.Fatalf("get %q: %v", g.Row, res)
				}
			}
		})
	}
}

func BenchmarkPut(b *testing.B) {
	r, err := region.Open(b.TempDir(), region.Options{Table: "bench", Families: []region.FamilyOptions{benchFamily()},
		DisableAutoCompaction: true, FlushSize: 1 << 30})
	require.NoError(b, err)
	defer r.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	v := make([]byte, 100)
	p := &region.Put{Cells: []encoding.KeyValue{{Family: benchFam, Qualifier: benchQual,
		Timestamp: encoding.LatestTimestamp, Type: encoding.TypePut, Value: v}}}
	keys := make([][]byte, 4096)
	for i := range keys {
		keys[i] = benchKey(rng.IntN(1 << 30))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p.Row = keys[i%len(keys)]
		if err := r.Put(p); err != nil {
			b.Fatal(err)
		}
	}
}

// openCounters opens an empty region that keeps everything in its memstore
// and returns it with the harness's 10,000 counter rows.
func openCounters(b *testing.B) (*region.Region, [][]byte) {
	r, err := region.Open(b.TempDir(), region.Options{Table: "bench", Families: []region.FamilyOptions{benchFamily()},
		DisableAutoCompaction: true, FlushSize: 1 << 30})
	require.NoError(b, err)
	b.Cleanup(func() { r.Close() })
	keys := make([][]byte, 10000)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "ctrs%010d", i)
	}
	return r, keys
}

func BenchmarkIncrement(b *testing.B) {
	r, keys := openCounters(b)
	rng := rand.New(rand.NewPCG(1, 2))
	inc := &region.Increment{Columns: []region.IncrementColumn{{Family: benchFam, Qualifier: benchQual, Amount: 1}}}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		inc.Row = keys[rng.IntN(len(keys))]
		res, err := r.Increment(inc)
		if err != nil {
			b.Fatal(err)
		}
		if v := res.Value(benchFam, benchQual); len(v) != 8 || binary.BigEndian.Uint64(v) == 0 {
			b.Fatalf("increment %q: %v", inc.Row, res)
		}
	}
}

// BenchmarkIncrementParallel is BenchmarkIncrement from many goroutines,
// as the peer harness's Increment sweep runs it: random rows among the
// 10,000 counters, so writers rarely meet on a row, and what they share is
// the region's write path (mvcc queue, WAL, row lock shards). With two
// processors it is bound by the cache lines those writes move between
// them; see mvcc's BenchmarkCacheLineRoundTrip for the host's state.
func BenchmarkIncrementParallel(b *testing.B) {
	for _, par := range []int{1, 16} {
		b.Run(fmt.Sprintf("goroutines=%d", 2*par), func(b *testing.B) {
			r, keys := openCounters(b)
			// The counters first, in order, as the harness writes them:
			// the memstore then picks its row prefix from them (see
			// memstore's learnSkip) before any Increment reads a row.
			zero := make([]byte, 8)
			for _, k := range keys {
				require.NoError(b, r.Put(&region.Put{Row: k, Cells: []encoding.KeyValue{{Family: benchFam, Qualifier: benchQual, Timestamp: encoding.LatestTimestamp, Value: zero}}}))
			}
			b.ReportAllocs()
			b.SetParallelism(par)
			var seed atomic.Uint64
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				rng := rand.New(rand.NewPCG(seed.Add(1), 2))
				inc := &region.Increment{Columns: []region.IncrementColumn{{Family: benchFam, Qualifier: benchQual, Amount: 1}}}
				for pb.Next() {
					inc.Row = keys[rng.IntN(len(keys))]
					if _, err := r.Increment(inc); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkGetPutParallel is the peer harness's locked read-modify-write
// (-rmw-mode lock): a Get of a counter's row and a Put of the new value,
// under a per-row mutex of the caller's, from many goroutines on random
// rows among the 10,000 counters. It is a plain client's Get then Put, not
// an Increment: every Put adds a version to the memstore.
func BenchmarkGetPutParallel(b *testing.B) {
	for _, par := range []int{0, 1, 2, 16} {
		name := fmt.Sprintf("goroutines=%d", 2*par)
		if par == 0 {
			name = "goroutines=1"
		}
		b.Run(name, func(b *testing.B) {
			r, keys := openCounters(b)
			zero := make([]byte, 8)
			for _, k := range keys {
				require.NoError(b, r.Put(&region.Put{Row: k, Cells: []encoding.KeyValue{{Family: benchFam, Qualifier: benchQual, Timestamp: encoding.LatestTimestamp, Value: zero}}}))
			}
			locks := make([]sync.Mutex, len(keys))
			var seed atomic.Uint64
			work := func(next func() bool) {
				rng := rand.New(rand.NewPCG(seed.Add(1), 3))
				cell := encoding.KeyValue{Family: benchFam, Qualifier: benchQual, Timestamp: encoding.LatestTimestamp, Type: encoding.TypePut}
				p := &region.Put{Cells: []encoding.KeyValue{cell}}
				var v [8]byte
				for next() {
					i := rng.IntN(len(keys))
					locks[i].Lock()
					res, err := r.Get(&region.Get{Row: keys[i]})
					if err != nil {
						locks[i].Unlock()
						b.Error(err)
						return
					}
					var n uint64
					if c := res.Latest(benchFam, benchQual); c != nil && len(c.Value) == 8 {
						n = binary.BigEndian.Uint64(c.Value)
					}
					binary.BigEndian.PutUint64(v[:], n+1)
					p.Row, p.Cells[0].Value = keys[i], v[:]
					err = r.Put(p)
					locks[i].Unlock()
					if err != nil {
						b.Error(err)
						return
					}
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			if par == 0 {
				n := 0
				work(func() bool { n++; return n <= b.N })
				return
			}
			b.SetParallelism(par)
			b.RunParallel(func(pb *testing.PB) { work(pb.Next) })
		})
	}
}

// BenchmarkScanRange runs the harness's scan workloads: from a random
// start row, 1..100 rows forward or reversed, with a cache of a tenth of
// the data. ns/op is per row.
func BenchmarkScanRange(b *testing.B) { benchScanRange(b, false) }

// BenchmarkScanRangeInto is BenchmarkScanRange reading each row with
// NextInto into one reused ScanResult, as a caller that keeps no row does
// (Pebble's iterators hand out borrowed slices the same way): no garbage
// per row.
func BenchmarkScanRangeInto(b *testing.B) { benchScanRange(b, true) }

func benchScanRange(b *testing.B, into bool) {
	dir := b.TempDir()
	r0 := openPointTable(b, dir, 1<<20)
	var dataSize int64
	for _, f := range r0.Store("f").Files() {
		dataSize += f.Size()
	}
	require.NoError(b, r0.Close())
	for _, reversed := range []bool{false, true} {
		b.Run(fmt.Sprintf("reversed=%t", reversed), func(b *testing.B) {
			r := openPointTable(b, dir, dataSize/10)
			rng := rand.New(rand.NewPCG(5, 6))
			var res region.ScanResult
			scan := func(rows int) int {
				sc, err := r.NewScanner(&region.Scan{StartRow: benchKey(rng.IntN(pointBenchRows)), Reversed: reversed, Limit: rows})
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				for ; n < rows; n++ {
					var ok bool
					if into {
						ok, err = sc.NextInto(&res)
					} else {
						var r *region.ScanResult
						r, err = sc.Next()
						ok = r != nil
					}
					if err != nil {
						b.Fatal(err)
					}
					if !ok {
						break
					}
				}
				sc.Close()
				return n
			}
			for i := 0; i < 2000; i++ {
				scan(1 + rng.IntN(100))
			}
			b.ReportAllocs()
			b.ResetTimer()
			for done := 0; done < b.N; {
				done += max(1, scan(min(1+rng.IntN(100), b.N-done)))
			}
		})
	}
}

// BenchmarkOneRowScan is a client's region lookup (HBase's
// getRegionLocation): a reversed scan of one row from a random key, in the
// harness's table, every block cached.
func BenchmarkOneRowScan(b *testing.B) {
	r := openPointTable(b, b.TempDir(), 1<<30)
	rng := rand.New(rand.NewPCG(5, 6))
	keys := make([][]byte, 1<<12)
	for i := range keys {
		keys[i] = fmt.Appendf(benchKey(rng.IntN(pointBenchRows)), "5")
	}
	scan := &region.Scan{Reversed: true, Limit: 1}
	var res region.ScanResult
	for _, k := range keys { // warm the cache
		scan.StartRow = k
		sc, err := r.NewScanner(scan)
		require.NoError(b, err)
		_, err = sc.NextInto(&res)
		require.NoError(b, err)
		sc.Close()
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		scan.StartRow = keys[i%len(keys)]
		sc, err := r.NewScanner(scan)
		if err != nil {
			b.Fatal(err)
		}
		if ok, err := sc.NextInto(&res); err != nil || !ok {
			b.Fatal(ok, err)
		}
		sc.Close()
	}
}

// BenchmarkGetPut is the harness's lock-mode read-modify-write: a Get of
// a counter, then a Put of the new value, on 10,000 counters in the
// memstore; beside BenchmarkIncrement, HBase's native one.
func BenchmarkGetPut(b *testing.B) {
	r, keys := openCounters(b)
	rng := rand.New(rand.NewPCG(1, 2))
	g := &region.Get{}
	v := make([]byte, 8)
	p := &region.Put{Cells: []encoding.KeyValue{{Family: benchFam, Qualifier: benchQual,
		Timestamp: encoding.LatestTimestamp, Type: encoding.TypePut, Value: v}}}
	var res region.Result
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		g.Row = keys[rng.IntN(len(keys))]
		if _, err := r.GetInto(g, &res); err != nil {
			b.Fatal(err)
		}
		var n uint64
		if c := res.Value(benchFam, benchQual); len(c) == 8 {
			n = binary.BigEndian.Uint64(c)
		}
		binary.BigEndian.PutUint64(v, n+1)
		p.Row = g.Row
		if err := r.Put(p); err != nil {
			b.Fatal(err)
		}
	}
}
