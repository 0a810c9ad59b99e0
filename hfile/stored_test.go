package hfile

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/internal/blockcodec"
	"github.com/stretchr/testify/require"
)

// TestSnappyStoredBlocks: a SNAPPY file's data blocks that snappy cannot
// shrink by an eighth are written as one literal (a few bytes over their
// size, readable by any snappy decoder), compressible ones stay compressed,
// and both read back the same through every kind of block memory: pooled
// (no cache), shared (a reference-counting cache) and fresh (a plain cache).
func TestSnappyStoredBlocks(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	cells := func(n int, value func(i int) []byte) []*encoding.KeyValue {
		kvs := make([]*encoding.KeyValue, n)
		for i := range kvs {
			kvs[i] = &encoding.KeyValue{Row: []byte(fmt.Sprintf("user%010d", i)), Family: []byte("f"), Qualifier: []byte("v"),
				Timestamp: 1700000000000, Type: encoding.TypePut, SeqNum: encoding.SeqNum(i + 1), Value: value(i)}
		}
		return kvs
	}
	random := cells(4000, func(int) []byte {
		b := make([]byte, 100)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	})
	repeated := cells(4000, func(i int) []byte { return bytes.Repeat([]byte{byte('a' + i%26)}, 100) })

	for _, tc := range []struct {
		name   string
		kvs    []*encoding.KeyValue
		stored bool
	}{{"incompressible", random, true}, {"compressible", repeated, false}} {
		t.Run(tc.name, func(t *testing.T) {
			data := buildFile(t, tc.kvs, WriterOptions{Compression: CompressionSnappy, Encoding: encoding.EncodingFastDiff, BlockSize: 4 << 10})
			r := openBytes(t, data, nil)
			dataBlocks := 0
			require.NoError(t, r.WalkBlocks(func(h BlockHeader, b *Block) error {
				if !h.Type.IsData() {
					return nil
				}
				dataBlocks++
				payload := data[h.Offset+HeaderSize : h.Offset+int64(h.OnDiskDataSizeWithHeader)]
				lit, ok := blockcodec.SnappyStored(payload, h.UncompressedSize)
				require.Equal(t, tc.stored, ok, "block at %d: stored", h.Offset)
				if ok {
					require.Equal(t, b.Data, lit, "block at %d", h.Offset)
					require.LessOrEqual(t, len(payload), h.UncompressedSize+8+10, "block at %d", h.Offset)
				} else {
					require.Less(t, len(payload), h.UncompressedSize-h.UncompressedSize/8, "block at %d", h.Offset)
				}
				return nil
			}))
			require.Greater(t, dataBlocks, 10)
			require.NoError(t, r.Close())

			for _, cache := range []struct {
				name string
				c    Cache
			}{{"pooled", nil}, {"shared", newRefCache(8)}, {"heap", newMapCache()}} {
				r := openBytes(t, data, cache.c)
				for pass := 0; pass < 2; pass++ { // the second reads cached blocks
					it := r.NewIterator(true)
					ok, err := it.First()
					for i := 0; i < len(tc.kvs); i++ {
						require.NoError(t, err)
						require.True(t, ok, "%s: cell %d missing", cache.name, i)
						var kv encoding.KeyValue
						it.KeyValue(&kv)
						require.Equal(t, string(tc.kvs[i].Row), string(kv.Row), "%s: cell %d", cache.name, i)
						require.Equal(t, tc.kvs[i].Value, kv.Value, "%s: cell %d", cache.name, i)
						ok, err = it.Next()
					}
					require.NoError(t, err)
					require.False(t, ok, "%s: cells past the last", cache.name)
					it.Close()
				}
				require.NoError(t, r.Close())
			}
		})
	}
}
