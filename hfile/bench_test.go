package hfile

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/regionkv/regionkv/encoding"
	"github.com/stretchr/testify/require"
)

// mapCache is an unbounded Cache for tests and benchmarks.
type mapCache struct {
	mu sync.RWMutex
	m  map[[2]int64]*Block
}

func newMapCache() *mapCache { return &mapCache{m: map[[2]int64]*Block{}} }

func (c *mapCache) GetBlock(file uint64, off int64) *Block {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.m[[2]int64{int64(file), off}]
}

func (c *mapCache) CacheBlock(file uint64, off int64, b *Block, _ bool) {
	c.mu.Lock()
	c.m[[2]int64{int64(file), off}] = b
	c.mu.Unlock()
}

// tenColumnCells returns rows with 10 short qualifiers and 10-byte values.
func tenColumnCells(rng *rand.Rand, rows int) []*encoding.KeyValue {
	var kvs []*encoding.KeyValue
	for i := 0; i < rows; i++ {
		for q := 0; q < 10; q++ {
			kvs = append(kvs, &encoding.KeyValue{
				Row: []byte(fmt.Sprintf("%026d", i)), Family: []byte("info"), Qualifier: []byte{byte('0' + q)},
				Timestamp: 1700000000000, Type: encoding.TypePut, SeqNum: encoding.SeqNum(i*10 + q + 1),
				Value: randBytes(rng, 10, "0123456789abcdef"),
			})
		}
	}
	return kvs
}

func buildFile(b testing.TB, kvs []*encoding.KeyValue, o WriterOptions) []byte {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, o)
	require.NoError(b, err)
	for _, kv := range kvs {
		require.NoError(b, w.Append(kv))
	}
	require.NoError(b, w.Close())
	return buf.Bytes()
}

var benchEncodings = []encoding.DataBlockEncoding{encoding.EncodingNone, encoding.EncodingPrefix, encoding.EncodingFastDiff, encoding.EncodingRowIndexV1}

// BenchmarkFileSize reports the on-disk size of a whole HFile with PREFIX
// and FAST_DIFF relative to NONE (no compression), for PE-style rows and for
// rows of 10 short columns. Run with -benchtime=1x; the figure is the
// size_ratio metric.
func BenchmarkFileSize(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	sets := map[string][]*encoding.KeyValue{"pe": peCells(rng, 100000), "10cols": tenColumnCells(rng, 20000)}
	for _, set := range []string{"pe", "10cols"} {
		kvs := sets[set]
		none := len(buildFile(b, kvs, WriterOptions{}))
		for _, enc := range benchEncodings {
			b.Run(fmt.Sprintf("data=%s/enc=%s", set, enc), func(b *testing.B) {
				var n int
				for i := 0; i < b.N; i++ {
					n = len(buildFile(b, kvs, WriterOptions{Encoding: enc}))
				}
				b.ReportMetric(float64(n)/float64(none), "size_ratio")
				b.ReportMetric(float64(n)/float64(len(kvs)), "B/cell")
			})
		}
	}
}

// BenchmarkIteratorSeekTo seeks to random existing keys with every block
// cached: the steady state of a hot read path, which must not allocate.
func BenchmarkIteratorSeekTo(b *testing.B) {
	rng := rand.New(rand.NewPCG(2, 2))
	kvs := peCells(rng, 50000)
	keys := make([]encoding.Key, 1024)
	for i := range keys {
		keys[i] = kvs[rng.IntN(len(kvs))].Key()
	}
	for _, enc := range benchEncodings {
		b.Run(fmt.Sprintf("enc=%s", enc), func(b *testing.B) {
			data := buildFile(b, kvs, WriterOptions{Encoding: enc, Compression: CompressionSnappy, IndexBlockMaxSize: 1024})
			r, err := Open(bytes.NewReader(data), int64(len(data)), "bench", ReaderOptions{Cache: newMapCache()})
			require.NoError(b, err)
			it := r.NewIterator(true)
			for _, k := range keys { // warm the cache
				_, _ = it.SeekTo(k)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				res, err := it.SeekTo(keys[i&1023])
				if err != nil || res != encoding.SeekExact {
					b.Fatal(res, err)
				}
			}
		})
	}
}

// BenchmarkIteratorNext scans a file from a cold reader (no cache), so it
// includes reading, checksumming and decompressing every block.
func BenchmarkIteratorNext(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 3))
	kvs := peCells(rng, 100000)
	for _, enc := range benchEncodings {
		for _, comp := range []Compression{CompressionNone, CompressionSnappy, CompressionGZ} {
			b.Run(fmt.Sprintf("enc=%s/comp=%s", enc, comp), func(b *testing.B) {
				data := buildFile(b, kvs, WriterOptions{Encoding: enc, Compression: comp})
				b.SetBytes(int64(len(kvs) * 154))
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					r, err := Open(bytes.NewReader(data), int64(len(data)), "bench", ReaderOptions{})
					if err != nil {
						b.Fatal(err)
					}
					it := r.NewIterator(false)
					n := 0
					for ok, err := it.First(); ok; ok, err = it.Next() {
						if err != nil {
							b.Fatal(err)
						}
						n++
					}
					if n != len(kvs) {
						b.Fatal(n)
					}
				}
			})
		}
	}
}
