package region

import (
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/regionkv/regionkv/encoding"
)

// BenchmarkIncrementContended increments counters of a few hot rows from
// many goroutines: the row locks' exclusive path under contention, which
// must not collapse as writers are added (HBASE-15213).
func BenchmarkIncrementContended(b *testing.B) {
	for _, rows := range []int{1, 16} {
		for _, par := range []int{1, 16} {
			b.Run(fmt.Sprintf("rows=%d/goroutines=%d", rows, 2*par), func(b *testing.B) {
				r, err := Open(b.TempDir(), Options{Families: []FamilyOptions{{Name: "f"}},
					DisableAutoCompaction: true, FlushSize: 1 << 30})
				if err != nil {
					b.Fatal(err)
				}
				defer r.Close()
				keys := make([][]byte, rows)
				for i := range keys {
					keys[i] = fmt.Appendf(nil, "ctr%04d", i)
				}
				b.ReportAllocs()
				b.SetParallelism(par)
				b.RunParallel(func(pb *testing.PB) {
					inc := &Increment{Columns: []IncrementColumn{{Family: []byte("f"), Qualifier: []byte("n"), Amount: 1}}}
					i := 0
					for pb.Next() {
						inc.Row = keys[i%len(keys)]
						i++
						if _, err := r.Increment(inc); err != nil {
							b.Error(err)
							return
						}
					}
				})
			})
		}
	}
}

// BenchmarkPutParallel is BenchmarkPut's write from many goroutines, each
// on its own rows: group commit and the sharded row locks.
func BenchmarkPutParallel(b *testing.B) {
	for _, par := range []int{1, 16} {
		b.Run(fmt.Sprintf("goroutines=%d", 2*par), func(b *testing.B) {
			r, err := Open(b.TempDir(), Options{Families: []FamilyOptions{{Name: "f"}},
				DisableAutoCompaction: true, FlushSize: 1 << 30})
			if err != nil {
				b.Fatal(err)
			}
			defer r.Close()
			b.ReportAllocs()
			b.SetParallelism(par)
			var id atomic.Int64
			b.RunParallel(func(pb *testing.PB) {
				p := &Put{Cells: []encoding.KeyValue{{Family: []byte("f"), Qualifier: []byte("v"),
					Timestamp: encoding.LatestTimestamp, Value: make([]byte, 100)}}}
				base := id.Add(1) << 20
				for i := int64(0); pb.Next(); i++ {
					// The region copies the row: the buffer is reused.
					p.Row = strconv.AppendInt(append(p.Row[:0], "row"...), base+i%4096, 10)
					if err := r.Put(p); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkFlushOverwritten flushes a memstore of 10,000 counters written
// 60 times each, as a client's Get and Put leave them (the peer harness's
// -rmw-mode lock fills its 64 MiB memstore so): the flush writes one
// version per column, and its cost is in reading the other 59 past. One op
// is one flush of 600,000 cells.
func BenchmarkFlushOverwritten(b *testing.B) {
	r, err := Open(b.TempDir(), Options{Families: []FamilyOptions{{Name: "f"}},
		DisableAutoCompaction: true, FlushSize: 1 << 30})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	p := &Put{Cells: []encoding.KeyValue{{Family: []byte("f"), Qualifier: []byte("v"),
		Timestamp: encoding.LatestTimestamp, Value: make([]byte, 8)}}}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		for v := 0; v < 60; v++ {
			for c := 0; c < 10000; c++ {
				p.Row = fmt.Appendf(p.Row[:0], "ctrs%010d", (c*7919)%10000)
				if err := r.Put(p); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.StartTimer()
		if err := r.Flush(); err != nil {
			b.Fatal(err)
		}
	}
}
