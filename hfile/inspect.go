package hfile

import (
	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/encoding"
)

// BlockHeader describes one block as stored, for tools.
type BlockHeader struct {
	Offset                   int64
	Type                     BlockType
	OnDiskSize               int // header + payload + checksums
	UncompressedSize         int // payload after decompression
	PrevOffset               int64
	ChecksumType             ChecksumType
	BytesPerChecksum         int
	OnDiskDataSizeWithHeader int
}

// WalkBlocks reads every block from offset 0 up to the trailer, verifying
// checksums and decompressing each, and calls fn with its header. It stops
// at the first error, which names the block offset.
func (r *Reader) WalkBlocks(fn func(h BlockHeader, b *Block) error) error {
	end := r.size - TrailerSize
	for off := int64(0); off < end; {
		b, err := r.readBlockUncached(off, -1)
		if err != nil {
			return errors.Wrapf(err, "hfile %s", r.name)
		}
		var hb [HeaderSize]byte
		if _, err := r.f.ReadAt(hb[:], off); err != nil {
			return errors.Wrapf(err, "hfile %s: block at offset %d", r.name, off)
		}
		h, _ := decodeHeader(hb[:], off)
		bh := BlockHeader{Offset: off, Type: h.typ, OnDiskSize: h.onDiskSize(), UncompressedSize: int(h.uncompressedSize),
			PrevOffset: h.prevOffset, ChecksumType: h.checksumType, BytesPerChecksum: int(h.bytesPerChecksum),
			OnDiskDataSizeWithHeader: int(h.onDiskDataSizeWithHdr)}
		if err := fn(bh, b); err != nil {
			return err
		}
		off += int64(b.OnDiskSize)
	}
	return nil
}

// IndexEntry is one entry of a block index.
type IndexEntry struct {
	Offset     int64
	OnDiskSize int
	Key        []byte
}

// RootIndex returns the root data index entries.
func (r *Reader) RootIndex() []IndexEntry { return rootEntries(r.dataIndex) }

// MetaIndex returns the meta index entries (keys are block names).
func (r *Reader) MetaIndex() []IndexEntry { return rootEntries(r.metaIndex) }

func rootEntries(ri *rootIndex) []IndexEntry {
	out := make([]IndexEntry, ri.len())
	for i := range out {
		out[i] = IndexEntry{Offset: ri.offsets[i], OnDiskSize: int(ri.sizes[i]), Key: ri.keys[i]}
	}
	return out
}

// MidKeyMetadata returns the mid-key metadata of a multi-level index.
func (r *Reader) MidKeyMetadata() (leafOffset int64, leafOnDiskSize int, entry int, ok bool) {
	ri := r.dataIndex
	return ri.midLeafOffset, int(ri.midLeafOnDiskSize), int(ri.midKeyEntry), ri.hasMidKey
}

// IndexBlock reads a leaf or intermediate index block and returns its entries.
func (r *Reader) IndexBlock(off int64, onDiskSize int) (BlockType, []IndexEntry, error) {
	b, err := r.readBlock(off, onDiskSize, true)
	if err != nil {
		return 0, nil, err
	}
	if b.Type != BlockLeafIndex && b.Type != BlockIntermediateIndex {
		return b.Type, nil, r.corruptf(off, "expected an index block, found %s", b.Type)
	}
	out, err := nonRootEntries(b)
	if err != nil {
		return b.Type, nil, errors.Wrapf(err, "hfile %s", r.name)
	}
	return b.Type, out, nil
}

// nonRootEntries decodes the entries of leaf or intermediate index block b.
func nonRootEntries(b *Block) ([]IndexEntry, error) {
	x, err := parseNonRootIndex(b.Data, b.Offset)
	if err != nil {
		return nil, err
	}
	out := make([]IndexEntry, x.n)
	for i := range out {
		o, s, k, ok := x.entry(i)
		if !ok {
			return nil, encoding.CorruptionErrorf("index block at offset %d: malformed entry %d", b.Offset, i)
		}
		out[i] = IndexEntry{Offset: o, OnDiskSize: int(s), Key: k}
	}
	return out, nil
}

// DataBlockCount returns the number of data blocks, walking the index.
func (r *Reader) DataBlockCount() (int, error) {
	levels := int(r.trailer.NumDataIndexLevels)
	if levels <= 1 {
		return r.dataIndex.len(), nil
	}
	var count func(es []IndexEntry, level int) (int, error)
	count = func(es []IndexEntry, level int) (int, error) {
		if level == levels {
			return len(es), nil
		}
		n := 0
		for _, e := range es {
			_, sub, err := r.IndexBlock(e.Offset, e.OnDiskSize)
			if err != nil {
				return 0, err
			}
			c, err := count(sub, level+1)
			if err != nil {
				return 0, err
			}
			n += c
		}
		return n, nil
	}
	return count(r.RootIndex(), 1)
}

// MidKey returns the key HBase's HFileBlockIndex.midkey picks, which a
// region split takes its split row from: with a multi-level index, the
// entry the mid-key metadata names in its leaf index block; with one level,
// the key of the middle root entry. Index keys may be shortened (a key
// between two blocks' rows), so MidKey need not be a cell's key. It
// returns nil for a file without cells. The key is the caller's.
func (r *Reader) MidKey() (encoding.Key, error) {
	ri := r.dataIndex
	if ri.len() == 0 {
		return nil, nil
	}
	if !ri.hasMidKey || r.trailer.NumDataIndexLevels <= 1 {
		k, err := encoding.ParseKey(ri.keys[ri.len()/2])
		if err != nil {
			return nil, errors.Wrapf(err, "hfile %s: mid-key", r.name)
		}
		return append(encoding.Key(nil), k...), nil
	}
	b, err := r.readBlock(ri.midLeafOffset, int(ri.midLeafOnDiskSize), true)
	if err != nil {
		return nil, errors.Wrapf(err, "hfile %s: mid-key leaf block", r.name)
	}
	if b.Type != BlockLeafIndex {
		return nil, r.corruptf(ri.midLeafOffset, "mid-key metadata names a %s block, not a leaf index", b.Type)
	}
	x, err := parseNonRootIndex(b.Data, ri.midLeafOffset)
	if err != nil {
		return nil, errors.Wrapf(err, "hfile %s", r.name)
	}
	if ri.midKeyEntry < 0 || int(ri.midKeyEntry) >= x.n {
		return nil, r.corruptf(ri.midLeafOffset, "mid-key entry %d of a leaf index of %d entries", ri.midKeyEntry, x.n)
	}
	_, _, k, ok := x.entry(int(ri.midKeyEntry))
	if !ok {
		return nil, r.corruptf(ri.midLeafOffset, "malformed mid-key entry %d", ri.midKeyEntry)
	}
	key, err := encoding.ParseKey(k)
	if err != nil {
		return nil, errors.Wrapf(err, "hfile %s: mid-key entry at offset %d", r.name, ri.midLeafOffset)
	}
	return append(encoding.Key(nil), key...), nil
}
