package hfile

import (
	"bytes"
	"sort"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/encoding"
)

// Verify reads the whole file and checks that its parts agree with each
// other, beyond what Open checks and what reads check as they go; it is
// what `regionsrv hfile -k` runs after its row-order scan. It checks that:
//
//   - every block from offset 0 to the trailer reads, verifies its
//     checksums and decompresses, the blocks are contiguous, and the
//     load-on-open section starts at a block boundary;
//   - the data blocks come before the load-on-open section, chained by their
//     previous block offsets, from first_data_block_offset to
//     last_data_block_offset, and every one decodes to the end;
//   - the data index, walked level by level, lists exactly those data blocks
//     in file order with their on-disk sizes; each index key is at most its
//     block's first key and above the previous block's last key (index keys
//     may be shortened separators, minor version 3), the first is the
//     file's first key, and each child index block starts with its parent's
//     key; uncompressed_data_index_size is the index blocks' total size;
//   - the cells add up to entry_count, and the last one is LASTKEY;
//   - the bloom chunks and meta blocks the load-on-open section lists are
//     blocks of that type and size.
//
// Errors are marked encoding.ErrCorruption and name the file and offset.
func (r *Reader) Verify() error {
	if err := r.verify(); err != nil {
		return errors.Wrapf(err, "hfile %s", r.name)
	}
	return nil
}

// dataBlockInfo is what Verify learns of a data block by reading it.
type dataBlockInfo struct {
	off         int64
	size        int
	first, last []byte
}

func (r *Reader) verify() error {
	t := r.trailer
	loo := int64(t.LoadOnOpenDataOffset)
	end := r.size - TrailerSize
	seeker, err := encoding.NewSeeker(r.encoding, r.format, r.cmp)
	if err != nil {
		return err
	}
	type blockInfo struct {
		off  int64
		size int
		typ  BlockType
	}
	var (
		blocks []blockInfo
		data   []dataBlockInfo
		cells  uint64
	)
	prevData := int64(-1)
	for off := int64(0); off < end; {
		b, err := r.readBlockUncached(off, -1)
		if err != nil {
			return err
		}
		blocks = append(blocks, blockInfo{off, b.OnDiskSize, b.Type})
		if b.Type.IsData() {
			if err := r.checkDataBlock(b, off); err != nil {
				return err
			}
			switch {
			case off >= loo:
				return encoding.CorruptionErrorf("data block at offset %d in the load-on-open section (load_on_open_data_offset %d)", off, loo)
			case b.PrevOffset != prevData:
				return encoding.CorruptionErrorf("data block at offset %d: previous block offset %d, but the previous data block is at %d",
					off, b.PrevOffset, prevData)
			}
			d, n, err := readDataBlockKeys(seeker, b)
			if err != nil {
				return err
			}
			data = append(data, d)
			cells += n
			prevData = off
		}
		off += int64(b.OnDiskSize)
	}
	at := func(off int64) (blockInfo, bool) {
		i := sort.Search(len(blocks), func(i int) bool { return blocks[i].off >= off })
		if i < len(blocks) && blocks[i].off == off {
			return blocks[i], true
		}
		return blockInfo{}, false
	}
	if b, ok := at(loo); !ok || b.typ != BlockRootIndex {
		return encoding.CorruptionErrorf("load_on_open_data_offset %d is not the offset of a root index block", loo)
	}

	// The data blocks, against the trailer.
	switch {
	case cells != t.EntryCount:
		return encoding.CorruptionErrorf("the data blocks hold %d cells, trailer entry_count is %d", cells, t.EntryCount)
	case len(data) == 0:
		if t.DataIndexCount != 0 {
			return encoding.CorruptionErrorf("no data blocks, but data_index_count is %d", t.DataIndexCount)
		}
	case data[0].off != t.FirstDataBlockOffset:
		return encoding.CorruptionErrorf("first data block at offset %d, trailer first_data_block_offset is %d", data[0].off, t.FirstDataBlockOffset)
	case data[len(data)-1].off != t.LastDataBlockOffset:
		return encoding.CorruptionErrorf("last data block at offset %d, trailer last_data_block_offset is %d",
			data[len(data)-1].off, t.LastDataBlockOffset)
	}
	if len(data) > 0 && r.lastKey != nil && r.cmp.CompareKeys(r.lastKey, data[len(data)-1].last) != 0 {
		return encoding.CorruptionErrorf("file info LASTKEY %s, but the last cell is %s", r.lastKey, encoding.Key(data[len(data)-1].last))
	}

	// The data index, against the data blocks.
	leaves, indexBytes, err := r.indexLeaves()
	if err != nil {
		return err
	}
	if indexBytes != t.UncompressedDataIndexSize {
		return encoding.CorruptionErrorf("the data index blocks hold %d bytes, trailer uncompressed_data_index_size is %d",
			indexBytes, t.UncompressedDataIndexSize)
	}
	if len(leaves) != len(data) {
		return encoding.CorruptionErrorf("the data index lists %d data blocks, the file has %d", len(leaves), len(data))
	}
	for i, e := range leaves {
		d := data[i]
		switch {
		case e.Offset != d.off || e.OnDiskSize != d.size:
			return encoding.CorruptionErrorf("data index entry %d points at offset %d size %d, but data block %d is at offset %d size %d",
				i, e.Offset, e.OnDiskSize, i, d.off, d.size)
		case i == 0 && !bytes.Equal(e.Key, d.first):
			return encoding.CorruptionErrorf("first data index key %s is not the first key %s of the block at offset %d",
				encoding.Key(e.Key), encoding.Key(d.first), d.off)
		case r.cmp.CompareKeys(e.Key, d.first) > 0:
			return encoding.CorruptionErrorf("data index key %s is above the first key %s of the block at offset %d",
				encoding.Key(e.Key), encoding.Key(d.first), d.off)
		case i > 0 && r.cmp.CompareKeys(data[i-1].last, e.Key) >= 0:
			return encoding.CorruptionErrorf("data index key %s for the block at offset %d is not above the last key %s of the block before",
				encoding.Key(e.Key), d.off, encoding.Key(data[i-1].last))
		}
	}

	// Blocks the load-on-open section points at.
	for _, f := range [...]*BloomFilter{r.bloom, r.dfBloom} {
		if f == nil {
			continue
		}
		for i, c := range f.Chunks {
			if b, ok := at(c.Offset); !ok || b.typ != BlockBloomChunk || b.size != int(c.OnDiskSize) {
				return encoding.CorruptionErrorf("bloom chunk %d: no %d-byte bloom chunk block at offset %d", i, c.OnDiskSize, c.Offset)
			}
		}
	}
	for i, e := range r.MetaIndex() {
		if b, ok := at(e.Offset); !ok || b.typ != BlockMeta || b.size != e.OnDiskSize {
			return encoding.CorruptionErrorf("meta index entry %d (%q): no %d-byte meta block at offset %d", i, e.Key, e.OnDiskSize, e.Offset)
		}
	}
	return nil
}

// readDataBlockKeys decodes every cell of data block b and returns its first
// and last keys (copied) and its cell count.
func readDataBlockKeys(s encoding.Seeker, b *Block) (dataBlockInfo, uint64, error) {
	d := dataBlockInfo{off: b.Offset, size: b.OnDiskSize}
	wrap := func(err error) error {
		return errors.Wrapf(encoding.MarkCorruption(err), "data block at offset %d", b.Offset)
	}
	if err := s.Init(b.Data); err != nil {
		return d, 0, wrap(err)
	}
	d.first = bytes.Clone(s.Key())
	n := uint64(1)
	for {
		ok, err := s.Next()
		if err != nil {
			return d, 0, wrap(err)
		}
		if !ok {
			break
		}
		n++
	}
	d.last = bytes.Clone(s.Key())
	return d, n, nil
}

// indexLeaves walks the whole data index and returns its leaf-level
// entries (those pointing at data blocks) in order, and the total payload
// size of its blocks, root included.
func (r *Reader) indexLeaves() ([]IndexEntry, uint64, error) {
	levels := int(r.trailer.NumDataIndexLevels)
	root := r.RootIndex()
	total := r.rootIndexSize
	if levels <= 1 {
		return root, total, nil
	}
	var leaves []IndexEntry
	var walk func(es []IndexEntry, level int) error
	walk = func(es []IndexEntry, level int) error {
		for _, e := range es {
			b, err := r.readBlockKeep(e.Offset, e.OnDiskSize, false)
			if err != nil {
				return err
			}
			want := BlockIntermediateIndex
			if level == levels-1 {
				want = BlockLeafIndex
			}
			if b.Type != want {
				return encoding.CorruptionErrorf("index level %d of %d: expected %s at offset %d, found %s", level, levels, want, e.Offset, b.Type)
			}
			total += uint64(len(b.Data))
			sub, err := nonRootEntries(b)
			if err != nil {
				return err
			}
			if !bytes.Equal(sub[0].Key, e.Key) {
				return encoding.CorruptionErrorf("index block at offset %d starts with %s, its parent's key is %s",
					e.Offset, encoding.Key(sub[0].Key), encoding.Key(e.Key))
			}
			if level == levels-1 {
				leaves = append(leaves, sub...)
			} else if err := walk(sub, level+1); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(root, 1); err != nil {
		return nil, 0, err
	}
	return leaves, total, nil
}
