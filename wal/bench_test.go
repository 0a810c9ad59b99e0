package wal

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/mvcc"
	"github.com/stretchr/testify/require"
)

// BenchmarkWALAppend measures a region's write as it will be done: take a
// sequence id and append inside mvcc.BeginWith, then Sync with the
// durability, then complete. Each entry is one 100-byte cell. The WAL lives
// in the test's temp dir (on this machine's disk, not tmpfs), so FSYNC_WAL
// pays a real fsync per group commit.
func BenchmarkWALAppend(b *testing.B) { benchmarkAppends(b, false) }

// BenchmarkWALAppendPrepared is BenchmarkWALAppend with the entry encoded
// before the mvcc lock (PreparedEntry), as the region does.
func BenchmarkWALAppendPrepared(b *testing.B) { benchmarkAppends(b, true) }

func benchmarkAppends(b *testing.B, prepared bool) {
	for _, d := range []Durability{SyncWAL, FSyncWAL} {
		for _, writers := range []int{1, 16, 64} {
			b.Run(fmt.Sprintf("durability=%s/writers=%d", d, writers), func(b *testing.B) {
				benchmarkAppend(b, d, writers, prepared)
			})
		}
	}
}

func benchmarkAppend(b *testing.B, d Durability, writers int, prepared bool) {
	w, err := Open(b.TempDir(), Options{AsyncFlushInterval: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	mv := mvcc.New(0)
	key := Key{EncodedRegionName: []byte("1588230740abcdef1588230740abcdef"), TableName: []byte("TestTable")}
	value := make([]byte, 100)
	b.ReportAllocs()
	b.SetBytes(int64(len(value)))
	b.ResetTimer()
	start := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	for i := 0; i < writers; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			row := []byte(fmt.Sprintf("row-%08d", i))
			edit := Edit{Cells: []encoding.KeyValue{{Row: row, Family: []byte("info0"), Qualifier: []byte("0"),
				Timestamp: 1, Type: encoding.TypePut, Value: value}}}
			k := key
			var p PreparedEntry
			for next.Add(1) <= int64(b.N) {
				var txid uint64
				var aerr error
				if prepared {
					k.SeqNum = mv.WritePoint() + 1
					if aerr = p.Prepare(&k, &edit); aerr != nil {
						b.Error(aerr)
						return
					}
				}
				e := mv.BeginWith(func(seq uint64) {
					if prepared {
						txid, aerr = w.AppendPrepared(&p, seq)
						return
					}
					k.SeqNum = seq
					txid, aerr = w.Append(&k, &edit)
				})
				if aerr == nil {
					aerr = w.Sync(txid, d)
				}
				mv.Complete(e)
				if aerr != nil {
					b.Error(aerr)
					return
				}
			}
		}(i)
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "ops/s")
	m := w.Metrics()
	b.ReportMetric(float64(m.Appends)/float64(max(m.Writes, 1)), "appends/write")
	if d == FSyncWAL {
		b.ReportMetric(float64(m.Appends)/float64(max(m.Syncs, 1)), "appends/fsync")
	}
}

// TestAppendAllocs checks that appending and syncing an entry does not
// allocate once the writer's buffers have grown.
func TestAppendAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("-race allocates")
	}
	w := openTest(t, t.TempDir(), Options{})
	defer w.Close()
	k, e := testEdit(3)
	var err error
	allocs := testing.AllocsPerRun(1000, func() {
		var txid uint64
		if txid, err = w.Append(k, e); err == nil {
			err = w.Sync(txid, SyncWAL)
		}
	})
	require.NoError(t, err)
	require.Zero(t, allocs)
}

// BenchmarkWALRollStall measures what a size roll costs the writers: two
// SyncWAL writers, each write begun and completed through an mvcc Control
// as in the region (so a write still in flight holds the other's back), on
// 64 MiB segments. Each op fills one segment and rolls it; roll-stall-ms is
// the median over the rolls of the longest single write around each, which
// is the roll's stall (the other writes take microseconds).
func BenchmarkWALRollStall(b *testing.B) {
	w, err := Open(b.TempDir(), Options{AsyncFlushInterval: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	mv := mvcc.New(0)
	stalls := make([]float64, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var longest atomic.Int64
		rolls := w.Metrics().Rolls
		var wg sync.WaitGroup
		for g := 0; g < 2; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				key := Key{EncodedRegionName: []byte("1588230740abcdef1588230740abcdef"), TableName: []byte("TestTable")}
				edit := Edit{Cells: []encoding.KeyValue{{Row: []byte("row-00000001"), Family: []byte("f"),
					Qualifier: []byte("v"), Timestamp: 1, Type: encoding.TypePut, Value: make([]byte, 8)}}}
				for w.Metrics().Rolls == rolls {
					start := time.Now()
					var txid uint64
					var aerr error
					e := mv.BeginWith(func(seq uint64) {
						key.SeqNum = seq
						txid, aerr = w.Append(&key, &edit)
					})
					if aerr == nil {
						aerr = w.Sync(txid, SyncWAL)
					}
					mv.CompleteAndWait(e)
					if aerr != nil {
						b.Error(aerr)
						return
					}
					d := int64(time.Since(start))
					for m := longest.Load(); d > m && !longest.CompareAndSwap(m, d); m = longest.Load() {
					}
				}
			}()
		}
		wg.Wait()
		stalls = append(stalls, float64(longest.Load())/1e6)
	}
	b.StopTimer()
	slices.Sort(stalls)
	b.ReportMetric(stalls[len(stalls)/2], "roll-stall-ms")
}
