// Package encoding holds the cell model shared by every other package: the
// KeyValue, its serialized key layout, the comparators that order cells the
// way HBase does, the primitive number encodings HBase's formats use, and the
// data block encodings (NONE, PREFIX, FAST_DIFF) with their seekers.
//
// It plays the part of Pebble's internal/base and imports nothing of ours.
//
// # Key layout
//
// A serialized key (HBase's "flat key") is
//
//	+-------------+-----+-------------+--------+-----------+-----------+------+
//	| rowLen (2B) | row | famLen (1B) | family | qualifier | ts (8B)   | type |
//	+-------------+-----+-------------+--------+-----------+-----------+------+
//
// big-endian throughout; the qualifier length is implicit. A KeyValue in an
// unencoded block is keyLen(4) valueLen(4) key value [tagsLen(2) tags]
// [memstoreTS vlong]. These layouts are part of the on-disk format and must
// not change.
//
// # Data block encodings
//
// A data block's payload is its cells in one of HBase's DataBlockEncodings.
// NewBlockEncoder writes NONE, PREFIX, FAST_DIFF and ROW_INDEX_V1 byte for
// byte as HBase does, and NewSeeker reads and seeks them (HBase's
// EncodedSeeker, and the unencoded scan of HFileReaderImpl for NONE). PREFIX
// and FAST_DIFF payloads start with the 2-byte encoding id and the 4-byte
// size the cells would take in NONE format; each cell then stores only what
// differs from the previous cell's key. ROW_INDEX_V1 keeps NONE's cells and
// adds an index of the rows. The formats are drawn in none.go, prefix.go,
// fastdiff.go and rowindex.go. DIFF is not implemented
// (ErrUnsupportedEncoding), nor are dictionary-compressed tags, which we
// never write.
//
// Seekers treat payloads as untrusted: anything that does not decode is an
// error marked as corruption, and a seek within a block allocates nothing.
//
// # Cell blocks
//
// AppendCellBlock and CellBlockIter implement HBase's KeyValueCodec (and
// KeyValueCodecWithTags), the cell format of RPC cell blocks: per cell a
// 4-byte total length, then keyLen(4) valueLen(4) key value [tagsLen(2) tags].
//
// Values of this package are not safe for concurrent mutation; comparators and
// encoders without state may be shared. Encoders, seekers and cell block
// iterators are not safe for concurrent use.
package encoding
