package hfile

import (
	"bytes"
	"encoding/binary"
	"os"
	"testing"

	"github.com/regionkv/regionkv/encoding"
	"github.com/stretchr/testify/require"
)

// TestVerifyValidFiles: Verify accepts every kind of file we write, and
// HBase's.
func TestVerifyValidFiles(t *testing.T) {
	for _, enc := range []encoding.DataBlockEncoding{encoding.EncodingNone, encoding.EncodingPrefix, encoding.EncodingFastDiff, encoding.EncodingRowIndexV1} {
		for _, comp := range []Compression{CompressionNone, CompressionGZ, CompressionSnappy, CompressionZstd} {
			for _, bt := range []BloomType{BloomNone, BloomRow, BloomRowCol} {
				b := sampleFile(t, enc, comp, bt)
				require.NoError(t, openBytes(t, b, nil).Verify(), "%s/%s/%s", enc, comp, bt)
			}
		}
	}
	for _, name := range []string{"testdata/v3-gz-rowbloom-25cells.hfile"} {
		r, err := OpenFile(name, ReaderOptions{})
		require.NoError(t, err)
		require.NoError(t, r.Verify())
		require.NoError(t, r.Close())
	}
	// HBase's damaged fixture: its data block does not decompress.
	b, err := os.ReadFile("testdata/v3-gz-corrupt-block.hfile")
	require.NoError(t, err)
	require.True(t, encoding.IsCorruption(openBytes(t, b, nil).Verify()))
}

// TestVerifyFindsInconsistencies damages files in ways that pass every
// checksum (the blocks are rewritten with fresh ones) or that only a whole
// file read meets, and that Open and a scan do not notice.
func TestVerifyFindsInconsistencies(t *testing.T) {
	file := trailerFixtures(t)[2].file // two-level, uncompressed
	r := openBytes(t, file, nil)
	root := r.RootIndex()
	_, leaf, err := r.IndexBlock(root[0].Offset, root[0].OnDiskSize)
	require.NoError(t, err)
	require.Greater(t, len(leaf), 2)

	// A leaf entry pointing at the next data block.
	b := bytes.Clone(file)
	rewriteBlock(t, b, root[0].Offset, func(p []byte) {
		x, err := parseNonRootIndex(p, root[0].Offset)
		require.NoError(t, err)
		s := int(binary.BigEndian.Uint32(p[4+4*1:]))
		binary.BigEndian.PutUint64(p[x.entriesStart()+s:], uint64(leaf[2].Offset))
	})
	err = openBytes(t, b, nil).Verify()
	require.True(t, encoding.IsCorruption(err), "%v", err)
	require.Contains(t, err.Error(), "data index entry 1 points at offset")

	// A leaf entry's key moved above its block's first key (the key of
	// the entry after it).
	b = bytes.Clone(file)
	_, leaf2, err := r.IndexBlock(root[0].Offset, root[0].OnDiskSize)
	require.NoError(t, err)
	if len(leaf2[1].Key) == len(leaf2[2].Key) {
		rewriteBlock(t, b, root[0].Offset, func(p []byte) {
			x, err := parseNonRootIndex(p, root[0].Offset)
			require.NoError(t, err)
			s := int(binary.BigEndian.Uint32(p[4+4*1:]))
			copy(p[x.entriesStart()+s+entryOverhead:], leaf2[2].Key)
		})
		err = openBytes(t, b, nil).Verify()
		require.True(t, encoding.IsCorruption(err), "%v", err)
	}

	// A meta block no read ever touches, damaged.
	fx := trailerFixtures(t)[4] // blooms, with a meta block
	r = openBytes(t, fx.file, nil)
	mi := r.MetaIndex()
	require.Len(t, mi, 1)
	b = bytes.Clone(fx.file)
	b[mi[0].Offset+HeaderSize] ^= 1
	r = openBytes(t, b, nil)
	_, err = readAll(b)
	require.NoError(t, err)
	err = r.Verify()
	require.True(t, encoding.IsCorruption(err), "%v", err)
	require.Contains(t, err.Error(), "checksum mismatch")
}
