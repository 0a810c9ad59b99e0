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
