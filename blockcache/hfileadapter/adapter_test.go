package hfileadapter

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/regionkv/regionkv/blockcache"
	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/hfile"
	"github.com/stretchr/testify/require"
)

func newCache(t *testing.T, mod func(*blockcache.Options)) Cache {
	t.Helper()
	o := blockcache.DefaultOptions()
	o.Size = 1 << 20
	if mod != nil {
		mod(&o)
	}
	c, err := New(o)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func TestGetAndCacheBlock(t *testing.T) {
	c := newCache(t, nil)
	var hc hfile.Cache = c
	require.Nil(t, hc.GetBlock(1, 0))
	b := &hfile.Block{Type: hfile.BlockData, Offset: 0, Data: make([]byte, 100)}
	hc.CacheBlock(1, 0, b, false)
	require.Same(t, b, hc.GetBlock(1, 0))
	require.Nil(t, hc.GetBlock(2, 0))
	st := c.Stats()
	require.EqualValues(t, 1, st.HitCount)
	require.EqualValues(t, 2, st.MissCount)
	require.EqualValues(t, 1, st.DataBlockCount)
	require.Greater(t, st.Size, b.MemSize())
}

func TestOffHeapBlocks(t *testing.T) {
	require.False(t, newCache(t, nil).OffHeapBlocks(), "1 MiB: below the default minimum")
	require.True(t, newCache(t, func(o *blockcache.Options) { o.Size = blockcache.DefaultOffHeapMinSize }).OffHeapBlocks())
	require.True(t, newCache(t, func(o *blockcache.Options) { o.OffHeapMinSize = 0 }).OffHeapBlocks())
	require.False(t, newCache(t, func(o *blockcache.Options) { o.Size, o.OffHeapMinSize = 1<<30, -1 }).OffHeapBlocks())
}

func TestKind(t *testing.T) {
	for typ, want := range map[hfile.BlockType]blockcache.Kind{
		hfile.BlockData:              blockcache.KindData,
		hfile.BlockEncodedData:       blockcache.KindData,
		hfile.BlockLeafIndex:         blockcache.KindIndex,
		hfile.BlockIntermediateIndex: blockcache.KindIndex,
		hfile.BlockRootIndex:         blockcache.KindIndex,
		hfile.BlockBloomChunk:        blockcache.KindBloom,
		hfile.BlockGeneralBloomMeta:  blockcache.KindBloom,
	} {
		require.Equal(t, want, Kind(typ), typ.String())
	}
}

func TestGetBlockDoesNotAllocate(t *testing.T) {
	if testing.Short() {
		t.Skip()
	}
	c := newCache(t, nil)
	b := &hfile.Block{Type: hfile.BlockData, Data: make([]byte, 10)}
	c.CacheBlock(1, 5, b, false)
	var hc hfile.Cache = c
	wrong := 0
	allocs := testing.AllocsPerRun(100, func() {
		if hc.GetBlock(1, 5) == nil || hc.GetBlock(1, 6) != nil {
			wrong++
		}
	})
	require.Zero(t, wrong, "GetBlock returned wrong results")
	if raceEnabled {
		return
	}
	require.Zero(t, allocs)
}

// TestThroughReader reads an HFile twice through the cache: the second scan
// reads nothing from the file.
func TestThroughReader(t *testing.T) {
	var buf bytes.Buffer
	w, err := hfile.NewWriter(&buf, hfile.WriterOptions{BlockSize: 4096})
	require.NoError(t, err)
	for i := 0; i < 2000; i++ {
		require.NoError(t, w.Append(&encoding.KeyValue{
			Row: []byte(fmt.Sprintf("row%06d", i)), Family: []byte("f"), Qualifier: []byte("q"),
			Timestamp: 1, Type: encoding.TypePut, Value: bytes.Repeat([]byte{'v'}, 50),
		}))
	}
	require.NoError(t, w.Close())

	c := newCache(t, nil)
	r, err := hfile.Open(bytes.NewReader(buf.Bytes()), int64(buf.Len()), "test", hfile.ReaderOptions{Cache: c, FileID: 42})
	require.NoError(t, err)
	defer r.Close()
	scan := func() int {
		it := r.NewIterator(true)
		n := 0
		for ok, err := it.First(); ok; ok, err = it.Next() {
			require.NoError(t, err)
			n++
		}
		require.NoError(t, it.Err())
		return n
	}
	require.Equal(t, 2000, scan())
	read := r.BlocksRead()
	st := c.Stats()
	require.Greater(t, st.DataBlockCount, int64(20))
	require.Equal(t, 2000, scan())
	require.Equal(t, read, r.BlocksRead(), "second scan served from the cache")
	require.Greater(t, c.Stats().HitCount, st.HitCount+20)
	require.Equal(t, int(c.Stats().Count), c.EvictFile(42))
}
