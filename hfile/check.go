package hfile

import (
	"slices"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/encoding"
)

// Open-time checks. The trailer is the one part of a file without a
// checksum, so Open believes nothing it says that the checksummed
// load-on-open section can confirm: a wrong count or offset there would
// otherwise hide cells without an error (a file whose entry count reads 0
// looks empty; a last data block offset one block early ends every scan
// one block early).

// readLoadOnOpen reads and verifies the blocks from the trailer's
// load-on-open offset to the trailer: the data root index, the meta index,
// the file info (at the trailer's file info offset) and at most one bloom
// meta of each kind, in that order, as HBase's HFileInfo.initMetaAndIndex
// expects them.
func (r *Reader) readLoadOnOpen() ([]*Block, error) {
	t := r.trailer
	end := r.size - TrailerSize
	var blocks []*Block
	var seen [numBlockTypes]bool
	for off := int64(t.LoadOnOpenDataOffset); off < end; {
		b, err := r.readBlockUncached(off, -1)
		if err != nil {
			return nil, errors.Wrapf(err, "load-on-open section (load_on_open_data_offset %d)", t.LoadOnOpenDataOffset)
		}
		// Check each block as it comes: a wrong offset (say 0) must not
		// read the whole file first.
		i := len(blocks)
		want := [...]BlockType{BlockRootIndex, BlockRootIndex, BlockFileInfo}
		switch {
		case i < len(want) && b.Type != want[i]:
			return nil, encoding.CorruptionErrorf("load-on-open block %d at offset %d is %s, want %s (load_on_open_data_offset %d)",
				i, off, b.Type, want[i], t.LoadOnOpenDataOffset)
		case i == 2 && off != int64(t.FileInfoOffset):
			return nil, encoding.CorruptionErrorf("trailer file_info_offset %d, but the file info block is at offset %d", t.FileInfoOffset, off)
		case i > 2 && ((b.Type != BlockGeneralBloomMeta && b.Type != BlockDeleteFamilyBloomMeta) || seen[b.Type]):
			return nil, encoding.CorruptionErrorf("unexpected %s block at offset %d in the load-on-open section", b.Type, off)
		}
		seen[b.Type] = true
		blocks = append(blocks, b)
		off += int64(b.OnDiskSize)
	}
	if len(blocks) < 3 {
		return nil, encoding.CorruptionErrorf("load-on-open section at offset %d (load_on_open_data_offset) has %d blocks, want at least 3",
			t.LoadOnOpenDataOffset, len(blocks))
	}
	return blocks, nil
}

// checkUnsupportedCodec returns the error for a trailer naming a codec this
// package cannot decode (unsupported): marked as corruption if the file
// info block decodes under a codec we have, since then it is the trailer
// that is wrong (a flipped bit turns NONE into LZO, GZ into LZO or BZIP2),
// and unsupported as it is otherwise.
func (r *Reader) checkUnsupportedCodec(unsupported error) error {
	t := r.trailer
	claimed := t.CompressionCodec
	defer func() { t.CompressionCodec = claimed }()
	off := int64(t.FileInfoOffset)
	for _, c := range [...]Compression{CompressionNone, CompressionGZ, CompressionSnappy, CompressionZstd} {
		t.CompressionCodec = c
		b, err := r.readBlockUncached(off, -1)
		if err != nil || b.Type != BlockFileInfo {
			continue
		}
		// Every writer puts entries in the file info, so an empty payload
		// proves nothing.
		if fi, err := decodeFileInfo(b.Data); err == nil && len(fi) > 0 {
			return encoding.CorruptionErrorf("trailer compression_codec %s, but the file info block at offset %d reads as %s",
				claimed, off, c)
		}
	}
	return unsupported
}

// checkIndex checks the trailer against the decoded root data index (whose
// entry count the trailer gave, and decodeRootIndex checked against the
// block's size) and the meta index:
//
//   - root keys are in order and entries point before the load-on-open
//     section;
//   - first_data_block_offset and last_data_block_offset are the offsets of
//     the index's first and last data blocks (with a multi-level index,
//     found by reading the first and the last leaf: a seek would read them
//     anyway, and they stay cached);
//   - uncompressed_data_index_size is the root's size (one level) or at
//     least the size of the index blocks read;
//   - total_uncompressed_bytes is not more than the file could hold
//     uncompressed (uncompressed files only; HBase's readers never use it,
//     and writers differ in what they count).
func (r *Reader) checkIndex(blocks []*Block) error {
	t := r.trailer
	ri := r.dataIndex
	loo := int64(t.LoadOnOpenDataOffset)
	rootOff := blocks[0].Offset
	inside := func(what string, i int, off int64, size int32) error {
		if off < 0 || size < HeaderSize || off > loo-int64(size) {
			return encoding.CorruptionErrorf("%s entry %d at offset %d points at offset %d size %d, outside the blocks before load_on_open_data_offset %d",
				what, i, rootOff, off, size, loo)
		}
		return nil
	}
	for i := range ri.keys {
		if _, err := encoding.ParseKey(ri.keys[i]); err != nil {
			return errors.Wrapf(err, "data index entry %d at offset %d", i, rootOff)
		}
		if err := inside("data index", i, ri.offsets[i], ri.sizes[i]); err != nil {
			return err
		}
		if i > 0 && (r.cmp.CompareKeys(ri.keys[i-1], ri.keys[i]) > 0 || ri.offsets[i-1] >= ri.offsets[i]) {
			// Out of order under the trailer's comparator: the wrong
			// comparator, or a wrong entry count.
			return encoding.CorruptionErrorf("data index entry %d at offset %d is out of order under %s", i, rootOff, t.ComparatorClassName)
		}
	}
	for i := range r.metaIndex.keys {
		if err := inside("meta index", i, r.metaIndex.offsets[i], r.metaIndex.sizes[i]); err != nil {
			return err
		}
	}
	rootSize := uint64(len(blocks[0].Data))
	r.rootIndexSize = rootSize
	levels := int(t.NumDataIndexLevels)
	if levels <= 1 && t.UncompressedDataIndexSize != rootSize {
		return encoding.CorruptionErrorf("trailer uncompressed_data_index_size %d, but the single-level root index at offset %d holds %d bytes",
			t.UncompressedDataIndexSize, rootOff, rootSize)
	}
	if t.CompressionCodec == CompressionNone {
		// Blocks are stored as they are plus headers and checksums:
		// everything before the load-on-open section is at most loo bytes
		// uncompressed, and the load-on-open blocks but the root are counted
		// as they are.
		max := uint64(loo) + TrailerSize
		for _, b := range blocks[1:] {
			max += uint64(HeaderSize + len(b.Data))
		}
		if t.TotalUncompressedBytes > max {
			return encoding.CorruptionErrorf("trailer total_uncompressed_bytes %d, but an uncompressed file of %d bytes holds at most %d",
				t.TotalUncompressedBytes, r.size, max)
		}
		if levels > 1 && t.UncompressedDataIndexSize > rootSize+uint64(loo) {
			return encoding.CorruptionErrorf("trailer uncompressed_data_index_size %d, but an uncompressed index holds at most %d bytes",
				t.UncompressedDataIndexSize, rootSize+uint64(loo))
		}
	}
	if ri.len() == 0 {
		return nil // empty: decodeTrailer checked that it has no cells
	}
	if ri.hasMidKey {
		if err := inside("mid-key metadata", 0, ri.midLeafOffset, ri.midLeafOnDiskSize); err != nil || ri.midKeyEntry < 0 {
			return encoding.CorruptionErrorf("data index at offset %d: bad mid-key metadata (leaf offset %d size %d entry %d)",
				rootOff, ri.midLeafOffset, ri.midLeafOnDiskSize, ri.midKeyEntry)
		}
	}
	first, last := ri.offsets[0], ri.offsets[ri.len()-1]
	if levels > 1 {
		var read []int64 // index blocks already counted
		indexBytes := rootSize
		var err error
		if first, err = r.indexEdge(0, false, &read, &indexBytes); err != nil {
			return err
		}
		if last, err = r.indexEdge(ri.len()-1, true, &read, &indexBytes); err != nil {
			return err
		}
		if t.UncompressedDataIndexSize < indexBytes {
			return encoding.CorruptionErrorf("trailer uncompressed_data_index_size %d, but the index blocks read on open already hold %d bytes",
				t.UncompressedDataIndexSize, indexBytes)
		}
	}
	if first != t.FirstDataBlockOffset {
		return encoding.CorruptionErrorf("trailer first_data_block_offset %d, but the index starts at the data block at offset %d",
			t.FirstDataBlockOffset, first)
	}
	if last != t.LastDataBlockOffset {
		return encoding.CorruptionErrorf("trailer last_data_block_offset %d, but the index ends with the data block at offset %d",
			t.LastDataBlockOffset, last)
	}
	return nil
}

// indexEdge walks a multi-level index from root entry i down to the leaf
// level, taking the first entry of every block, or the last if last, and
// returns the data block offset it reaches. It adds the payload size of each
// index block not yet in read to *indexBytes.
func (r *Reader) indexEdge(i int, last bool, read *[]int64, indexBytes *uint64) (int64, error) {
	levels := int(r.trailer.NumDataIndexLevels)
	off, size := r.dataIndex.offsets[i], r.dataIndex.sizes[i]
	for level := 1; level < levels; level++ {
		b, err := r.readBlockKeep(off, int(size), true)
		if err != nil {
			return 0, errors.Wrapf(err, "index level %d (num_data_index_levels %d)", level, levels)
		}
		want := BlockIntermediateIndex
		if level == levels-1 {
			want = BlockLeafIndex
		}
		if b.Type != want {
			return 0, encoding.CorruptionErrorf("index level %d of %d (num_data_index_levels): expected %s at offset %d, found %s",
				level, levels, want, off, b.Type)
		}
		x, err := parseNonRootIndex(b.Data, off)
		if err != nil {
			return 0, err
		}
		if !slices.Contains(*read, off) {
			*read = append(*read, off)
			*indexBytes += uint64(len(b.Data))
		}
		j := 0
		if last {
			j = x.n - 1
		}
		o, s, _, ok := x.entry(j)
		if !ok || o < 0 || s < HeaderSize || o >= int64(r.trailer.LoadOnOpenDataOffset) {
			return 0, encoding.CorruptionErrorf("index block at offset %d: malformed entry %d", off, j)
		}
		off, size = o, s
	}
	return off, nil
}
