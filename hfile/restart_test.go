package hfile

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"github.com/regionkv/regionkv/encoding"
	"github.com/stretchr/testify/require"
)

// TestRestartIndexSeeks checks that seeks in cached blocks, which get a
// RestartIndex on their first cache hit, land where seeks in uncached
// blocks do, for every encoding, and that the cached blocks have one.
// restartTestEncodings are the encodings the restart index tests cover.
var restartTestEncodings = []encoding.DataBlockEncoding{encoding.EncodingNone, encoding.EncodingPrefix,
	encoding.EncodingFastDiff, encoding.EncodingRowIndexV1}

// writeCells returns a file of kvs with the given encoding and block size.
func writeCells(t *testing.T, kvs []*encoding.KeyValue, enc encoding.DataBlockEncoding, blockSize int) []byte {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, WriterOptions{Encoding: enc, BlockSize: blockSize})
	require.NoError(t, err)
	for _, kv := range kvs {
		require.NoError(t, w.Append(kv))
	}
	require.NoError(t, w.Close())
	return buf.Bytes()
}

func TestRestartIndexSeeks(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for _, enc := range restartTestEncodings {
		t.Run(enc.String(), func(t *testing.T) {
			kvs := peCells(rng, 5000)
			file := writeCells(t, kvs, enc, 16<<10)
			cache := newMapCache()
			cached := openBytes(t, file, cache)
			plain := openBytes(t, file, nil)
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

// TestScanRecordsRestartIndex: a scan through cached blocks leaves each
// block it read through with the restart index a seek would build, without
// decoding the block again; a block the scan only entered does not get one.
func TestScanRecordsRestartIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	for _, enc := range restartTestEncodings {
		t.Run(enc.String(), func(t *testing.T) {
			kvs := peCells(rng, 3000)
			cache := newMapCache()
			r := openBytes(t, writeCells(t, kvs, enc, 8<<10), cache)
			it := r.NewIterator(true)
			defer it.Close()
			// From the middle of the first block, past its second sample,
			// to the first cell of a block further on.
			_, err := it.SeekTo(kvs[encoding.RestartInterval+4].Key())
			require.NoError(t, err)
			first := it.blk.Offset
			for ok := true; ok && it.blk.Offset == first; {
				ok, err = it.Next()
				require.NoError(t, err)
			}
			for i := 0; i < 3; i++ {
				for at := it.blk.Offset; it.blk.Offset == at; {
					_, err = it.Next()
					require.NoError(t, err)
				}
			}
			last := it.blk.Offset
			indexed := 0
			for k, b := range cache.m {
				if !b.Type.IsData() {
					continue
				}
				off := k[1]
				x := b.restarts.Load()
				switch {
				case enc == encoding.EncodingRowIndexV1 || off == first || off == last:
					// Its own index; a seek skipped a sample; only entered.
					require.Nil(t, x, "block at %d", off)
				case x != nil:
					indexed++
					s, err := encoding.NewSeeker(enc, r.format, r.cmp)
					require.NoError(t, err)
					require.NoError(t, s.Init(b.Data))
					want, err := s.BuildRestartIndex()
					require.NoError(t, err)
					require.Equal(t, want, x, "block at %d", off)
				}
			}
			if enc != encoding.EncodingRowIndexV1 {
				require.Equal(t, 3, indexed, "the blocks read through")
			}
		})
	}
}

// fullMapCache is a mapCache that reports itself full (FullCache) while
// full is set.
type fullMapCache struct {
	*mapCache
	full atomic.Bool
}

func (c *fullMapCache) Full() bool { return c.full.Load() }

// TestScanInFullCacheRecordsOnlyHits: a scan that reads blocks from disk
// into a full cache does not record their restart indexes, since they tend
// to leave the cache before a seek wants them; a later scan that finds them
// cached records them, and so does a scan into a cache that is not full.
func TestScanInFullCacheRecordsOnlyHits(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	kvs := peCells(rng, 3000)
	cache := &fullMapCache{mapCache: newMapCache()}
	r := openBytes(t, writeCells(t, kvs, encoding.EncodingFastDiff, 8<<10), cache)
	// scan reads every cell from the first and returns the offsets of the
	// data blocks it read through, in order.
	scan := func() []int64 {
		it := r.NewIterator(true)
		defer it.Close()
		_, err := it.SeekTo(kvs[0].Key())
		require.NoError(t, err)
		var offs []int64
		for ok := true; ok; {
			if len(offs) == 0 || offs[len(offs)-1] != it.blk.Offset {
				offs = append(offs, it.blk.Offset)
			}
			ok, err = it.Next()
			require.NoError(t, err)
		}
		return offs
	}
	indexed := func(offs []int64) (n int) {
		for _, off := range offs {
			b := cache.m[[2]int64{0, off}]
			require.NotNil(t, b, "block at %d cached", off)
			if b.restarts.Load() != nil {
				n++
			}
		}
		return n
	}

	cache.full.Store(true)
	offs := scan()
	require.Greater(t, len(offs), 3)
	// The first block gets its index from the seek's lookup, a miss: none.
	require.Zero(t, indexed(offs), "blocks read from disk into a full cache")
	for _, off := range offs {
		require.True(t, cache.m[[2]int64{0, off}].churn.Load(), "block at %d", off)
	}

	// The second scan finds every block cached: the seek builds the first
	// block's index, and the scan records the others'.
	require.Equal(t, offs, scan())
	require.Equal(t, len(offs), indexed(offs), "blocks a scan found cached")
	for _, off := range offs {
		require.False(t, cache.m[[2]int64{0, off}].churn.Load(), "block at %d", off)
	}

	// Into a cache that is not full, the first scan records.
	cache2 := newMapCache()
	r2 := openBytes(t, writeCells(t, kvs, encoding.EncodingFastDiff, 8<<10), cache2)
	it := r2.NewIterator(true)
	defer it.Close()
	_, err := it.SeekTo(kvs[0].Key())
	require.NoError(t, err)
	for ok := true; ok; {
		ok, err = it.Next()
		require.NoError(t, err)
	}
	n := 0
	for _, b := range cache2.m {
		if b.Type.IsData() && b.restarts.Load() != nil {
			n++
		}
	}
	// Every block: the seek landed on the first block's first cell.
	require.Equal(t, len(offs), n)
}

// TestSeekInFullCacheIndexesOnSecondHit: a block read into a full cache
// gets its restart index from the second seek that finds it cached, not
// the first; in a cache that is not full, from the first.
func TestSeekInFullCacheIndexesOnSecondHit(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 10))
	kvs := peCells(rng, 3000)
	data := writeCells(t, kvs, encoding.EncodingFastDiff, 8<<10)
	key := kvs[len(kvs)/2].Key()
	// seek seeks to key with a new iterator and returns the block it
	// landed in.
	seek := func(r *Reader) *Block {
		it := r.NewIterator(true)
		defer it.Close()
		_, err := it.SeekTo(key)
		require.NoError(t, err)
		return it.blk
	}
	for _, full := range []bool{true, false} {
		cache := &fullMapCache{mapCache: newMapCache()}
		cache.full.Store(full)
		r := openBytes(t, data, cache)
		b := seek(r) // a miss
		require.Nil(t, b.restarts.Load(), "full=%t: read from disk", full)
		require.Same(t, b, seek(r))
		if full {
			require.Nil(t, b.restarts.Load(), "first hit")
			require.False(t, b.churn.Load())
			require.Same(t, b, seek(r))
		}
		require.NotNil(t, b.restarts.Load(), "full=%t: indexed", full)
	}
}
