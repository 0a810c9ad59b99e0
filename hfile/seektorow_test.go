package hfile

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/regionkv/regionkv/encoding"
	"github.com/stretchr/testify/require"
)

// dataCache caches data blocks only, so that every bloom check reads its
// chunk from the file: a test counts bloom checks by BlocksRead. It is a
// CachePeeker, and counts the misses of GetBlock.
type dataCache struct {
	m             map[int64]*Block
	misses, peeks int
}

func (c *dataCache) GetBlock(_ uint64, off int64) *Block {
	b := c.m[off]
	if b == nil {
		c.misses++
	}
	return b
}

func (c *dataCache) GetCachedBlock(_ uint64, off int64) *Block {
	c.peeks++
	return c.m[off]
}

func (c *dataCache) CacheBlock(_ uint64, off int64, b *Block, _ bool) {
	if b.Type.IsData() {
		c.m[off] = b
	}
}

// TestSeekToRow: SeekToRow asks the bloom only when the block its key falls
// in is not cached, skips a row the bloom rules out without reading or
// counting a data block, and otherwise seeks as SeekTo does.
func TestSeekToRow(t *testing.T) {
	row := func(i int) []byte { return []byte(fmt.Sprintf("%06d", i)) }
	var kvs []*encoding.KeyValue
	for i := 0; i < 1000; i += 2 { // even rows only
		kvs = append(kvs, &encoding.KeyValue{Row: row(i), Family: []byte("f"), Qualifier: []byte("q"),
			Timestamp: 1, Type: encoding.TypePut, Value: make([]byte, 50)})
	}
	data := buildFile(t, kvs, WriterOptions{BlockSize: 1024, Encoding: encoding.EncodingFastDiff, BloomType: BloomRow})
	open := func(t *testing.T) (*Reader, *dataCache) {
		c := &dataCache{m: map[int64]*Block{}}
		r, err := Open(bytes.NewReader(data), int64(len(data)), t.Name(), ReaderOptions{Cache: c})
		require.NoError(t, err)
		require.EqualValues(t, 1, r.trailer.NumDataIndexLevels, "a root index only: a seek reads no index block")
		return r, c
	}
	seek := func(t *testing.T, it *Iterator, i int) (int, bool) {
		res, skipped, err := it.SeekToRow(encoding.FirstOnRow(nil, row(i)), &RowProbe{Row: row(i), Family: []byte("f")})
		require.NoError(t, err)
		return res, skipped
	}

	t.Run("uncached", func(t *testing.T) {
		r, c := open(t)
		it := r.NewIterator(true)
		skipped, falsePositives := 0, 0
		for i := 1; i < 999; i += 2 {
			before := r.BlocksRead()
			_, skip := seek(t, it, i)
			switch read := r.BlocksRead() - before; {
			case skip:
				skipped++
				require.EqualValues(t, 1, read, "row %d: the bloom chunk, and no data block", i)
			case read == 2:
				falsePositives++ // the chunk, then the block
			default:
				// The block a false positive read before: cached, so the
				// bloom is not asked.
				require.EqualValues(t, 0, read, "row %d", i)
			}
			it.Close()
			it = r.NewIterator(true)
		}
		require.Greater(t, skipped, 480, "the bloom rules out almost every absent row")
		// Every bloom check misses its chunk (it is never cached); a false
		// positive then misses its block. A skipped row misses nothing else.
		require.Equal(t, skipped+2*falsePositives, c.misses, "a row the bloom rules out counts no data block miss")
	})

	t.Run("present", func(t *testing.T) {
		// A present row, nothing cached: the bloom, then the block, and the
		// iterator is on the row.
		r, _ := open(t)
		it := r.NewIterator(true)
		before := r.BlocksRead()
		res, skip := seek(t, it, 500)
		require.False(t, skip)
		require.Equal(t, encoding.SeekBefore, res)
		ok, err := it.Next()
		require.NoError(t, err)
		require.True(t, ok)
		requireCell(t, kvs[250], it, false)
		require.EqualValues(t, 2, r.BlocksRead()-before)
	})

	t.Run("cached", func(t *testing.T) {
		r, c := open(t)
		it := r.NewIterator(true)
		for ok, err := it.First(); ok || err != nil; ok, err = it.Next() {
			require.NoError(t, err)
		}
		it.Close()
		before, misses := r.BlocksRead(), c.misses
		for i := 1; i < 999; i++ {
			it := r.NewIterator(true)
			res, skip := seek(t, it, i)
			require.False(t, skip, "row %d: a cached block is searched, the bloom is not asked", i)
			if res == encoding.SeekBefore {
				ok, err := it.Next()
				require.NoError(t, err)
				require.True(t, ok)
			}
			// On the first cell at or after the row: the row itself if present.
			var got encoding.KeyValue
			it.KeyValue(&got)
			want := kvs[(i+1)/2]
			require.Equal(t, string(want.Row), string(got.Row), "row %d", i)
			it.Close()
		}
		require.EqualValues(t, 0, r.BlocksRead()-before, "no bloom chunk and no block read")
		require.Equal(t, misses, c.misses)
	})

	t.Run("bloom off", func(t *testing.T) {
		// Once the bloom has answered a window of reads of rows the file
		// holds, most reads neither ask it nor peek at the cache: the one
		// lookup of the block counts its miss.
		r, c := open(t)
		for i := 0; i < 2*bloomWindow*bloomObserveEvery; i++ { // (see TestBloomGate)
			ok, err := r.MayContainGet(&RowProbe{Row: row(2 * (i % 500)), Family: []byte("f")})
			require.NoError(t, err)
			require.True(t, ok)
		}
		require.True(t, r.gate.skipping.Load())
		const reads = 320
		before, misses, peeks := r.BlocksRead(), c.misses, c.peeks
		blocks := 0
		for i := 1; i <= reads; i++ { // (row 0 precedes the first index key)
			it := r.NewIterator(true)
			n := r.BlocksRead()
			res, skip := seek(t, it, 2*i)
			require.False(t, skip)
			if res == encoding.SeekBefore {
				ok, err := it.Next()
				require.NoError(t, err)
				require.True(t, ok)
			}
			requireCell(t, kvs[i], it, false)
			if r.BlocksRead() > n {
				blocks++
			}
			it.Close()
		}
		// A sampled read (one in bloomSampleEvery on average, at random)
		// peeks first, then asks the bloom (a chunk read and a miss).
		sampled := c.peeks - peeks
		require.LessOrEqual(t, sampled, reads/4, "only sampled reads peek")
		require.LessOrEqual(t, int(r.BlocksRead()-before), blocks+sampled)
		require.LessOrEqual(t, c.misses-misses, blocks+sampled)
		require.GreaterOrEqual(t, c.misses-misses, blocks-sampled)
	})

	t.Run("no bloom", func(t *testing.T) {
		// A file without a bloom has nothing to ask: no peek, no gate, one
		// counted lookup per block.
		nb := buildFile(t, kvs, WriterOptions{BlockSize: 1024, Encoding: encoding.EncodingFastDiff})
		c := &dataCache{m: map[int64]*Block{}}
		r, err := Open(bytes.NewReader(nb), int64(len(nb)), t.Name(), ReaderOptions{Cache: c})
		require.NoError(t, err)
		before := r.BlocksRead() // (what Open read)
		for i := 1; i <= 100; i++ {
			it := r.NewIterator(true)
			_, skip := seek(t, it, 2*i)
			require.False(t, skip)
			it.Close()
		}
		require.Zero(t, c.peeks)
		require.Zero(t, r.gate.answers.Load())
		require.Positive(t, c.misses)
		require.EqualValues(t, r.BlocksRead()-before, c.misses, "each block read is the miss of its one lookup")
	})

	t.Run("before the file", func(t *testing.T) {
		r, _ := open(t)
		it := r.NewIterator(true)
		// The first row precedes the first index key as a first-on-row key:
		// the bloom is asked, says the row may be there, and the seek
		// reports the key precedes the file.
		res, skip := seek(t, it, 0)
		require.False(t, skip)
		require.Equal(t, encoding.SeekPrecedesFile, res)
	})
}

// rechargeCache is a mapCache that records what CacheRecharger charges to
// each cached block.
type rechargeCache struct {
	*mapCache
	recharged map[int64]int64
}

func (c *rechargeCache) RechargeBlock(file uint64, off int64, b *Block, delta int64) {
	if c.GetBlock(file, off) == b {
		c.recharged[off] += delta
	}
}

// TestRestartIndexCharged: a data block's restart index, whether a scan
// recorded it or a seek built it on the block's first hit, is charged to
// the cache once, at its size.
func TestRestartIndexCharged(t *testing.T) {
	var kvs []*encoding.KeyValue
	for i := 0; i < 500; i++ {
		kvs = append(kvs, &encoding.KeyValue{Row: []byte(fmt.Sprintf("%06d", i)), Family: []byte("f"), Qualifier: []byte("q"),
			Timestamp: 1, Type: encoding.TypePut, Value: make([]byte, 50)})
	}
	data := buildFile(t, kvs, WriterOptions{BlockSize: 1024, Encoding: encoding.EncodingFastDiff})
	open := func(t *testing.T) (*Reader, *rechargeCache) {
		c := &rechargeCache{mapCache: newMapCache(), recharged: map[int64]int64{}}
		r, err := Open(bytes.NewReader(data), int64(len(data)), t.Name(), ReaderOptions{Cache: c})
		require.NoError(t, err)
		return r, c
	}
	check := func(t *testing.T, c *rechargeCache) {
		n := 0
		for k, b := range c.m {
			off := k[1]
			if !b.Type.IsData() {
				continue
			}
			idx := b.restarts.Load()
			require.NotNil(t, idx, "block at %d", off)
			require.Positive(t, idx.MemSize())
			require.Equal(t, idx.MemSize(), c.recharged[off], "block at %d", off)
			n++
		}
		require.Greater(t, n, 10)
	}
	t.Run("recorded by a scan", func(t *testing.T) {
		r, c := open(t)
		for pass := 0; pass < 2; pass++ { // the second pass finds the indexes made
			it := r.NewIterator(true)
			for ok, err := it.First(); ok || err != nil; ok, err = it.Next() {
				require.NoError(t, err)
			}
			it.Close()
		}
		check(t, c)
	})
	t.Run("built by a seek", func(t *testing.T) {
		r, c := open(t)
		for pass := 0; pass < 2; pass++ { // a miss, then the first hit builds
			for _, kv := range kvs {
				it := r.NewIterator(true)
				_, err := it.SeekTo(kv.Key())
				require.NoError(t, err)
				it.Close()
			}
		}
		check(t, c)
	})
}
