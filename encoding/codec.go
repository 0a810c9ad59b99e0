package encoding

import (
	"encoding/binary"

	"github.com/cockroachdb/errors"
)

// Cell blocks carry cells next to protobuf messages in HBase RPCs
// (hbase.client.rpc.codec). We implement HBase's KeyValueCodec, which every
// client we serve uses, and KeyValueCodecWithTags. Each cell is
//
//	+---------------+-------------+---------------+-----+-------+------------------------+
//	| totalLen (4B) | keyLen (4B) | valueLen (4B) | key | value | [tagsLen (2B) | tags]  |
//	+---------------+-------------+---------------+-----+-------+------------------------+
//
// totalLen counts everything after itself. KeyValueCodec never writes the
// tags part. KeyValueCodecWithTags writes it only for a cell that has tags
// (KeyValueUtil.oswrite skips it when the tags length is 0), and its reader
// tells by totalLen whether it is there. Cells carry no sequence id.

// cellBlockLenSize is the size of each of the three lengths.
const cellBlockLenSize = 4

// CellBlockSize returns the number of bytes AppendCellBlock appends for kv.
func CellBlockSize(kv *KeyValue, withTags bool) int {
	n := 3*cellBlockLenSize + kv.KeyLen() + len(kv.Value)
	if withTags && len(kv.Tags) > 0 {
		n += 2 + len(kv.Tags)
	}
	return n
}

// AppendCellBlock appends kv to a cell block as KeyValueCodec writes it, or
// as KeyValueCodecWithTags if withTags. Without withTags, tags are dropped.
//
// REQUIRES: kv.Validate() == nil and len(kv.Tags) <= 65535.
func AppendCellBlock(dst []byte, kv *KeyValue, withTags bool) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(CellBlockSize(kv, withTags)-cellBlockLenSize))
	dst = binary.BigEndian.AppendUint32(dst, uint32(kv.KeyLen()))
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(kv.Value)))
	dst = kv.AppendKey(dst)
	dst = append(dst, kv.Value...)
	if withTags && len(kv.Tags) > 0 {
		dst = binary.BigEndian.AppendUint16(dst, uint16(len(kv.Tags)))
		dst = append(dst, kv.Tags...)
	}
	return dst
}

// CellBlockIter decodes a cell block one cell at a time, without allocating.
// Decoded cells alias the block, which must stay unchanged while they are in
// use. The zero value is an iterator over an empty block.
//
// An iterator rather than a callback lets the RPC layer take exactly the
// associated_cell_count cells of each mutation from one shared block.
type CellBlockIter struct {
	b        []byte
	off      int
	withTags bool
	err      error
}

// Init positions the iterator at the start of block b, decoded as
// KeyValueCodecWithTags if withTags and as KeyValueCodec otherwise.
func (it *CellBlockIter) Init(b []byte, withTags bool) {
	*it = CellBlockIter{b: b, withTags: withTags}
}

// Offset returns the number of bytes consumed so far.
func (it *CellBlockIter) Offset() int { return it.off }

// Next decodes the next cell into kv, whose slices then alias the block and
// whose SeqNum is 0. It returns false at the end of the block. A malformed
// cell returns an error marked as corruption, and so does every later call.
func (it *CellBlockIter) Next(kv *KeyValue) (bool, error) {
	if it.err != nil {
		return false, it.err
	}
	if it.off == len(it.b) {
		return false, nil
	}
	if err := it.decode(kv); err != nil {
		it.err = err
		return false, err
	}
	return true, nil
}

func (it *CellBlockIter) decode(kv *KeyValue) error {
	b, off := it.b, it.off
	if len(b)-off < cellBlockLenSize {
		return CorruptionErrorf("encoding: cell block: %d trailing bytes at offset %d", len(b)-off, off)
	}
	total := uint64(binary.BigEndian.Uint32(b[off:]))
	start := off + cellBlockLenSize
	if total > uint64(len(b)-start) {
		return CorruptionErrorf("encoding: cell block: cell at offset %d has length %d, %d bytes left",
			off, total, len(b)-start)
	}
	cell := b[start : start+int(total)]
	if len(cell) < 2*cellBlockLenSize {
		return CorruptionErrorf("encoding: cell block: cell at offset %d of %d bytes is too short", off, len(cell))
	}
	kl := uint64(binary.BigEndian.Uint32(cell))
	vl := uint64(binary.BigEndian.Uint32(cell[cellBlockLenSize:]))
	if 2*cellBlockLenSize+kl+vl > total {
		return CorruptionErrorf("encoding: cell block: cell at offset %d: key length %d and value length %d exceed cell length %d",
			off, kl, vl, total)
	}
	p := 2 * cellBlockLenSize
	key, err := ParseKey(cell[p : p+int(kl)])
	if err != nil {
		return errors.Wrapf(err, "encoding: cell block: cell at offset %d", off)
	}
	p += int(kl)
	value := cell[p : p+int(vl) : p+int(vl)]
	p += int(vl)
	var tags []byte
	if rest := cell[p:]; len(rest) > 0 {
		if !it.withTags {
			return CorruptionErrorf("encoding: cell block: cell at offset %d has %d bytes after its value", off, len(rest))
		}
		if len(rest) < 2 || int(binary.BigEndian.Uint16(rest)) != len(rest)-2 {
			return CorruptionErrorf("encoding: cell block: cell at offset %d: tags part of %d bytes is malformed", off, len(rest))
		}
		if len(rest) > 2 {
			tags = rest[2:len(rest):len(rest)]
		}
	}
	*kv = KeyValue{
		Row:       key.Row(),
		Family:    key.Family(),
		Qualifier: key.Qualifier(),
		Timestamp: key.Timestamp(),
		Type:      key.Type(),
		Value:     value,
		Tags:      tags,
	}
	it.off = start + int(total)
	return nil
}

// DecodeCellBlock calls fn for every cell of block b (see CellBlockIter for
// withTags and slice lifetimes). It stops at the first error, from the block
// or from fn, and returns it.
func DecodeCellBlock(b []byte, withTags bool, fn func(kv *KeyValue) error) error {
	var it CellBlockIter
	it.Init(b, withTags)
	var kv KeyValue
	for {
		ok, err := it.Next(&kv)
		if err != nil || !ok {
			return err
		}
		if err := fn(&kv); err != nil {
			return err
		}
	}
}
