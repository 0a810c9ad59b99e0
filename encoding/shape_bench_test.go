package encoding

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// harnessBlock returns one 4 KiB block of cells shaped like the peer
// harness's (bench/peers): dense 14-byte rows user%010d, family f,
// qualifier v, timestamps spread over a load of seconds, sequence ids up to
// 1M, 100-byte random values.
func harnessBlock() ([]KeyValue, BlockFormat) {
	rng := rand.New(rand.NewPCG(5, 6))
	f := BlockFormat{IncludesMvcc: true}
	var cells []KeyValue
	size := 0
	for i := 500000; size < 4<<10; i++ {
		v := make([]byte, 100)
		for j := range v {
			v[j] = byte(rng.Uint32())
		}
		kv := KeyValue{Row: []byte(fmt.Sprintf("user%010d", i)), Family: []byte("f"), Qualifier: []byte("v"),
			Timestamp: 1764633600000 + rng.Int64N(4000), Type: TypePut, SeqNum: SeqNum(1 + rng.IntN(1000000)), Value: v}
		cells = append(cells, kv)
		size += noneSize(f, &kv)
	}
	return cells, f
}

// BenchmarkDecodeHarnessBlock decodes a whole harness-shaped FAST_DIFF
// block, as a scan does on a block it reads; ns/cell is the figure.
func BenchmarkDecodeHarnessBlock(b *testing.B) {
	cells, f := harnessBlock()
	payload := encodeBlock(b, EncodingFastDiff, f, cells)
	s := newSeeker(EncodingFastDiff, f, InnerStoreComparer)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := s.Init(payload); err != nil {
			b.Fatal(err)
		}
		for {
			ok, err := s.Next()
			if err != nil {
				b.Fatal(err)
			}
			if !ok {
				break
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(cells)), "ns/cell")
}
