package hfile

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/regionkv/regionkv/encoding"
	"github.com/stretchr/testify/require"
)

// countingCache is a refCache that counts its lookups by block type, and
// whether it implements SampledCache decides how the sampled ones come in.
type countingCache struct {
	*refCache
	lookups, sampled map[BlockType]int
	weights          []int
	refs             bool // CountsBlockRefs
}

func newCountingCache(refs bool) *countingCache {
	return &countingCache{refCache: newRefCache(1 << 20), lookups: map[BlockType]int{},
		sampled: map[BlockType]int{}, refs: refs}
}

func (c *countingCache) CountsBlockRefs() bool { return c.refs }

func (c *countingCache) GetBlock(file uint64, off int64) *Block {
	b := c.refCache.GetBlock(file, off)
	if b != nil {
		c.mu.Lock()
		c.lookups[b.Type]++
		c.mu.Unlock()
	}
	return b
}

func (c *countingCache) GetBlockSampled(file uint64, off int64, weight int) *Block {
	b := c.refCache.GetBlock(file, off)
	c.mu.Lock()
	defer c.mu.Unlock()
	if b != nil {
		c.sampled[b.Type]++
	}
	c.weights = append(c.weights, weight)
	return b
}

func (c *countingCache) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.lookups)
	clear(c.sampled)
	c.weights = nil
}

// pinFile is a file with a two-level index of many leaves and a bloom of
// several chunks, and its cells.
func pinFile(t *testing.T) ([]byte, []*encoding.KeyValue) {
	return pinFileIndexSize(t, 2048)
}

// pinFileIndexSize is pinFile with index blocks of at most indexSize bytes:
// 512 gives a three-level index, four intermediate blocks over the leaves.
func pinFileIndexSize(t *testing.T, indexSize int) ([]byte, []*encoding.KeyValue) {
	kvs := peCells(rand.New(rand.NewPCG(3, 3)), 4000)
	data := buildFile(t, kvs, WriterOptions{BlockSize: 1024, IndexBlockMaxSize: indexSize,
		BloomType: BloomRow, BloomBlockSize: 512})
	return data, kvs
}

// pointReads does what a Get does to the file for each row: ask the bloom,
// then seek to the row; it checks the cell found.
func pointReads(t *testing.T, r *Reader, kvs []*encoding.KeyValue, rows []int) {
	t.Helper()
	require.NoError(t, checkPointReads(r, kvs, rows))
}

// checkPointReads is pointReads returning the first wrong read, for other
// goroutines than the test's.
func checkPointReads(r *Reader, kvs []*encoding.KeyValue, rows []int) error {
	it := r.NewIterator(true)
	defer it.Close()
	for _, i := range rows {
		kv := kvs[i]
		ok, err := r.MayContainRow(kv.Row)
		if err != nil || !ok {
			return fmt.Errorf("row %d: bloom says %v, %v", i, ok, err)
		}
		res, _, err := it.SeekToRow(encoding.FirstOnRow(nil, kv.Row), &RowProbe{Row: kv.Row})
		if err != nil {
			return fmt.Errorf("row %d: seek: %v", i, err)
		}
		switch res {
		case encoding.SeekPrecedesFile:
			if ok, err := it.First(); !ok || err != nil {
				return fmt.Errorf("row %d: first %v, %v", i, ok, err)
			}
		case encoding.SeekBefore:
			if ok, err := it.Next(); !ok || err != nil {
				return fmt.Errorf("row %d: next %v, %v", i, ok, err)
			}
		}
		if string(it.Key().Row()) != string(kv.Row) || string(it.Value()) != string(kv.Value) {
			return fmt.Errorf("row %d: found %q = %q", i, it.Key().Row(), it.Value())
		}
	}
	return nil
}

// TestPinnedIndexAndBloomBlocks: a reader whose cache counts references
// reads the index blocks under its root (and, in a three-level index, the
// leaves under each intermediate block) and the bloom chunks it found in the
// cache from its pins, asking the cache for about one read in
// pinRefreshEvery (as a SampledCache, with that weight); once the cache
// drops them it reads them through the cache again.
func TestPinnedIndexAndBloomBlocks(t *testing.T) {
	for _, tc := range []struct {
		indexSize int
		levels    int
	}{{2048, 2}, {512, 3}} {
		t.Run(fmt.Sprint(tc.levels, "-level"), func(t *testing.T) {
			data, kvs := pinFileIndexSize(t, tc.indexSize)
			cache := newCountingCache(true)
			r := openBytes(t, data, cache)
			require.EqualValues(t, tc.levels, r.trailer.NumDataIndexLevels)
			require.Greater(t, len(r.pins.leaves), 3)
			require.Greater(t, len(r.pins.general.chunks), 4)

			rows := make([]int, 0, 8000)
			for range 2 {
				for i := range kvs {
					rows = append(rows, i)
				}
			}
			// The first pass reads every block into the cache, and a second
			// lookup of each finds it there and pins it.
			pointReads(t, r, kvs, rows)
			cache.reset()
			pointReads(t, r, kvs, rows)
			reads := len(rows)
			for _, bt := range []BlockType{BlockIntermediateIndex, BlockLeafIndex, BlockBloomChunk} {
				// Expected reads/pinRefreshEvery = 500 of 8000; far below a
				// quarter of them with any generator that is not broken.
				require.Zero(t, cache.lookups[bt], "%s: every read of a pinned block is pinned or sampled", bt)
				if bt == BlockIntermediateIndex && tc.levels == 2 {
					continue
				}
				require.Greater(t, cache.sampled[bt], 0, bt)
				require.Less(t, cache.sampled[bt], reads/4, bt)
			}
			for _, w := range cache.weights {
				require.Equal(t, pinRefreshEvery, w)
			}

			// The cache drops every block: the pins are not read again, and
			// the next read of each goes through the cache, which reads the
			// file anew.
			leaf := r.pins.leaves[0].Load()
			require.NotNil(t, leaf)
			cache.evictAll()
			require.True(t, leaf.dropped.Load())
			before := r.BlocksRead()
			pointReads(t, r, kvs, []int{5})
			require.EqualValues(t, tc.levels+1, r.BlocksRead()-before,
				"the next read reads its data block, index blocks and bloom chunk again")
			before = r.BlocksRead()
			cache.reset()
			pointReads(t, r, kvs, rows)
			require.GreaterOrEqual(t, r.BlocksRead()-before, int64(len(r.pins.leaves)+len(r.pins.general.chunks)),
				"dropped pins are read from the file again")
			require.NotSame(t, leaf, r.pins.leaves[0].Load())
			require.False(t, r.pins.leaves[0].Load().dropped.Load())
		})
	}
}

// TestNoPinsWithoutReferenceCounts: a cache that does not count references
// never says it dropped a block, so its readers pin nothing and every read
// asks it; a reader without a cache pins what it keeps itself.
func TestNoPinsWithoutReferenceCounts(t *testing.T) {
	data, kvs := pinFile(t)
	cache := newCountingCache(false)
	r := openBytes(t, data, cache)
	require.Nil(t, r.pins.leaves)
	// Rows in distinct data blocks, so that every read reads one.
	rows := []int{1, 1000, 2000, 3999, 500, 1500, 2500, 3500, 1}
	pointReads(t, r, kvs, rows)
	cache.reset()
	pointReads(t, r, kvs, rows)
	require.GreaterOrEqual(t, cache.lookups[BlockLeafIndex], len(rows))
	require.GreaterOrEqual(t, cache.lookups[BlockBloomChunk], len(rows))
	require.Empty(t, cache.weights)

	r = openBytes(t, data, nil)
	require.NotNil(t, r.pins.leaves)
	pointReads(t, r, kvs, rows)
	before := r.BlocksRead()
	pointReads(t, r, kvs, rows)
	require.Equal(t, before, r.BlocksRead()-int64(len(rows)), "only the data blocks are read again")
}

// TestPinnedBlocksConcurrentEviction: readers on several goroutines read
// through pins while the cache drops and takes blocks again; every cell
// read is right (run under -race: the pins are atomic).
func TestPinnedBlocksConcurrentEviction(t *testing.T) {
	for _, indexSize := range []int{2048, 512} { // two and three index levels
		t.Run(fmt.Sprint(indexSize), func(t *testing.T) { pinnedConcurrentEviction(t, indexSize) })
	}
}

func pinnedConcurrentEviction(t *testing.T, indexSize int) {
	data, kvs := pinFileIndexSize(t, indexSize)
	cache := newCountingCache(true)
	r := openBytes(t, data, cache)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
				cache.evictAll()
			}
		}
	}()
	var readers sync.WaitGroup
	errs := make(chan error, 4)
	for g := range 4 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 9))
			rows := make([]int, 2000)
			for i := range rows {
				rows[i] = rng.IntN(len(kvs))
			}
			errs <- checkPointReads(r, kvs, rows)
		}()
	}
	readers.Wait()
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}
