package hfile

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/regionkv/regionkv/encoding"
	"github.com/stretchr/testify/require"
)

// TestRestartIndexSeeks checks that seeks in cached blocks, which get a
// RestartIndex on their first cache hit, land where seeks in uncached
// blocks do, for every encoding, and that the cached blocks have one.
func TestRestartIndexSeeks(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for _, enc := range []encoding.DataBlockEncoding{encoding.EncodingNone, encoding.EncodingPrefix, encoding.EncodingFastDiff, encoding.EncodingRowIndexV1} {
		t.Run(enc.String(), func(t *testing.T) {
			kvs := peCells(rng, 5000)
			var buf bytes.Buffer
			w, err := NewWriter(&buf, WriterOptions{Encoding: enc, BlockSize: 16 << 10})
			require.NoError(t, err)
			for _, kv := range kvs {
				require.NoError(t, w.Append(kv))
			}
			require.NoError(t, w.Close())
			cache := newMapCache()
			cached := openBytes(t, buf.Bytes(), cache)
			plain := openBytes(t, buf.Bytes(), nil)
			ci, pi := cached.NewIterator(true), plain.NewIterator(true)
			defer ci.Close()
			defer pi.Close()
			for round := 0; round < 3; round++ {
				for n := 0; n < 2000; n++ {
					i := rng.IntN(len(kvs))
					var key encoding.Key
					switch rng.IntN(3) {
					case 0:
						key = kvs[i].Key()
					case 1:
						key = encoding.FirstOnRow(nil, kvs[i].Row)
					default:
						key = encoding.LastOnRow(nil, kvs[i].Row)
					}
					msg := fmt.Sprintf("round %d key %s", round, key)
					if rng.IntN(2) == 0 {
						cr, cerr := ci.SeekTo(key)
						pr, perr := pi.SeekTo(key)
						require.NoError(t, cerr, msg)
						require.NoError(t, perr, msg)
						require.Equal(t, pr, cr, msg)
					} else {
						cok, cerr := ci.SeekBefore(key)
						pok, perr := pi.SeekBefore(key)
						require.NoError(t, cerr, msg)
						require.NoError(t, perr, msg)
						require.Equal(t, pok, cok, msg)
						if !cok {
							continue
						}
					}
					require.Equal(t, pi.Key(), ci.Key(), msg)
					require.Equal(t, pi.Value(), ci.Value(), msg)
					require.Equal(t, pi.SeqNum(), ci.SeqNum(), msg)
					// Next continues from the same place.
					cok, cerr := ci.Next()
					pok, perr := pi.Next()
					require.NoError(t, cerr)
					require.NoError(t, perr)
					require.Equal(t, pok, cok, msg)
					if cok {
						require.Equal(t, pi.Key(), ci.Key(), msg+", then Next")
					}
				}
			}
			indexed, data := 0, 0
			for _, b := range cache.m {
				if b.Type.IsData() {
					data++
					if x := b.restarts.Load(); x != nil {
						indexed++
						require.Greater(t, x.Len(), 1)
					}
				}
			}
			require.Greater(t, data, 10)
			if enc == encoding.EncodingRowIndexV1 {
				require.Zero(t, indexed, "a ROW_INDEX_V1 block carries its own index")
			} else {
				require.Equal(t, data, indexed, "every cached data block hit by a seek has a restart index")
			}
		})
	}
}
