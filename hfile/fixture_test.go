package hfile

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"testing"

	"github.com/regionkv/regionkv/encoding"
	"github.com/stretchr/testify/require"
)

// The two files in testdata were written by Apache HBase (from HBase's
// TestCompaction fixture): 25 Put cells, rows aaa..aay, family cf, empty
// qualifier, value = row, seqids 2..26, GZ compression, ROW bloom. The
// corrupt one has the gzip magic of its only data block zeroed.

func TestReadHBaseFile(t *testing.T) {
	r, err := OpenFile("testdata/v3-gz-rowbloom-25cells.hfile", ReaderOptions{})
	require.NoError(t, err)
	defer r.Close()

	tr := r.Trailer()
	require.Equal(t, 3, tr.MajorVersion)
	require.Equal(t, 3, tr.MinorVersion)
	require.Equal(t, CompressionGZ, tr.CompressionCodec)
	require.EqualValues(t, 25, tr.EntryCount)
	require.EqualValues(t, 443, tr.FileInfoOffset)
	require.EqualValues(t, 306, tr.LoadOnOpenDataOffset)
	require.EqualValues(t, 5598, tr.TotalUncompressedBytes)
	require.Equal(t, encoding.InnerStoreComparer, r.Comparer())
	require.True(t, r.Format().IncludesMvcc)
	require.False(t, r.Format().IncludesTags)
	require.Equal(t, BloomRow, r.BloomType())

	it := r.NewIterator(true)
	var kv encoding.KeyValue
	n := 0
	for ok, err := it.First(); ok || err != nil; ok, err = it.Next() {
		require.NoError(t, err)
		it.KeyValue(&kv)
		row := []byte{'a', 'a', byte('a' + n)}
		require.Equal(t, row, kv.Row)
		require.Equal(t, []byte("cf"), kv.Family)
		require.Empty(t, kv.Qualifier)
		require.Equal(t, encoding.TypePut, kv.Type)
		require.Equal(t, row, kv.Value)
		require.EqualValues(t, n+2, kv.SeqNum)
		n++
	}
	require.Equal(t, 25, n)
	require.Equal(t, "aay/cf:/1740407086033/Put", r.LastKey().String())

	for c := byte('a'); c <= 'y'; c++ {
		ok, err := r.MayContainRow([]byte{'a', 'a', c})
		require.NoError(t, err)
		require.True(t, ok, "row aa%c", c)
	}
	// Rows before the first chunk key are definitely absent.
	ok, err := r.MayContainRow([]byte("a"))
	require.NoError(t, err)
	require.False(t, ok)
	misses := 0
	for i := 0; i < 1000; i++ {
		ok, err := r.MayContainRow([]byte(fmt.Sprintf("zz%04d", i)))
		require.NoError(t, err)
		if !ok {
			misses++
		}
	}
	require.Greater(t, misses, 900, "bloom should reject most absent rows")

	// Seek to each row's first key and to keys between rows.
	for c := byte('a'); c <= 'y'; c++ {
		row := []byte{'a', 'a', c}
		res, err := it.SeekTo(encoding.FirstOnRow(nil, row))
		require.NoError(t, err)
		if c == 'a' {
			// The first-on-row key precedes the first cell (the index key is
			// the real first key), so the row's first cell is reached by Next
			// from "before the file".
			require.Equal(t, encoding.SeekPrecedesFile, res)
			continue
		}
		require.Equal(t, encoding.SeekBefore, res)
		ok, err := it.Next()
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, row, it.Key().Row())
	}
	ok, err = it.SeekBefore(encoding.FirstOnRow(nil, []byte("aam")))
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, []byte("aal"), it.Key().Row())
}

func TestReadHBaseCorruptFile(t *testing.T) {
	r, err := OpenFile("testdata/v3-gz-corrupt-block.hfile", ReaderOptions{})
	require.NoError(t, err, "the load-on-open section is intact")
	defer r.Close()
	it := r.NewIterator(false)
	_, err = it.First()
	require.Error(t, err)
	require.True(t, encoding.IsCorruption(err), "%v", err)
	require.Contains(t, err.Error(), "offset 0")
	require.Contains(t, err.Error(), "v3-gz-corrupt-block.hfile")
	// The iterator stays failed.
	ok, err2 := it.Next()
	require.False(t, ok)
	require.Error(t, err2)
}

func TestHBaseFileRoundTripsThroughOurWriter(t *testing.T) {
	// Reading HBase's file and rewriting it with the same settings must give
	// the same data block bytes: the NONE cell layout is byte-exact.
	r, err := OpenFile("testdata/v3-gz-rowbloom-25cells.hfile", ReaderOptions{})
	require.NoError(t, err)
	defer r.Close()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, WriterOptions{Compression: CompressionGZ, BloomType: BloomRow})
	require.NoError(t, err)
	it := r.NewIterator(false)
	var kv encoding.KeyValue
	for ok, err := it.First(); ok || err != nil; ok, err = it.Next() {
		require.NoError(t, err)
		it.KeyValue(&kv)
		require.NoError(t, w.Append(&kv))
	}
	require.NoError(t, w.Close())

	r2, err := Open(bytes.NewReader(buf.Bytes()), int64(buf.Len()), "rewritten", ReaderOptions{})
	require.NoError(t, err)
	var a, b []byte
	require.NoError(t, r.WalkBlocks(func(h BlockHeader, blk *Block) error {
		if h.Type == BlockData {
			a = blk.Data
		}
		return nil
	}))
	require.NoError(t, r2.WalkBlocks(func(h BlockHeader, blk *Block) error {
		if h.Type == BlockData {
			b = blk.Data
		}
		if h.Type == BlockBloomChunk {
			// Same rows, same sizing: the same folded chunk HBase wrote.
			require.Equal(t, "5410e8b0696b0c6d3a76b8ea798d7846def2e4ead2a12aa02fc0e2c35be01f27", hex.EncodeToString(blk.Data))
		}
		return nil
	}))
	require.Equal(t, a, b)
	require.Equal(t, r.RootIndex()[0].Key, r2.RootIndex()[0].Key)
	for _, k := range []string{FileInfoLastKey, FileInfoAvgKeyLen, FileInfoAvgValueLen, FileInfoKeyOfBiggestCell,
		FileInfoLenOfBiggestCell, FileInfoMaxMemstoreTS, FileInfoKeyValueVersion, FileInfoTimeRange,
		FileInfoEarliestPutTS, FileInfoBloomType, FileInfoLastBloomKey, FileInfoDeleteFamilyCnt} {
		require.Equal(t, r.FileInfo()[k], r2.FileInfo()[k], k)
	}
	require.Equal(t, r.Trailer().UncompressedDataIndexSize, r2.Trailer().UncompressedDataIndexSize)
}
