package hfile

import (
	"encoding/binary"
	"hash/crc32"
	"sync/atomic"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/internal/offheap"
)

// BlockType is HBase's BlockType, identified on disk by an 8-byte magic.
type BlockType uint8

// Block types in HBase's enum order.
const (
	BlockData BlockType = iota
	BlockEncodedData
	BlockLeafIndex
	BlockBloomChunk
	BlockMeta
	BlockIntermediateIndex
	BlockRootIndex
	BlockFileInfo
	BlockGeneralBloomMeta
	BlockDeleteFamilyBloomMeta
	BlockTrailer
	numBlockTypes
)

// The magics are part of the file format and must not change.
var blockMagics = [numBlockTypes]string{
	BlockData:                  "DATABLK*",
	BlockEncodedData:           "DATABLKE",
	BlockLeafIndex:             "IDXLEAF2",
	BlockBloomChunk:            "BLMFBLK2",
	BlockMeta:                  "METABLKc",
	BlockIntermediateIndex:     "IDXINTE2",
	BlockRootIndex:             "IDXROOT2",
	BlockFileInfo:              "FILEINF2",
	BlockGeneralBloomMeta:      "BLMFMET2",
	BlockDeleteFamilyBloomMeta: "DFBLMET2",
	BlockTrailer:               "TRABLK\"$",
}

var blockTypeNames = [numBlockTypes]string{
	"DATA", "ENCODED_DATA", "LEAF_INDEX", "BLOOM_CHUNK", "META", "INTERMEDIATE_INDEX",
	"ROOT_INDEX", "FILE_INFO", "GENERAL_BLOOM_META", "DELETE_FAMILY_BLOOM_META", "TRAILER",
}

// String returns HBase's enum name.
func (t BlockType) String() string {
	if t < numBlockTypes {
		return blockTypeNames[t]
	}
	return "UNKNOWN"
}

// Magic returns the 8-byte magic.
func (t BlockType) Magic() string { return blockMagics[t] }

// IsData reports whether t is a data block (plain or encoded).
func (t BlockType) IsData() bool { return t == BlockData || t == BlockEncodedData }

// IsIndex reports whether t is an index block.
func (t BlockType) IsIndex() bool {
	return t == BlockLeafIndex || t == BlockIntermediateIndex || t == BlockRootIndex
}

// IsBloom reports whether t holds bloom filter data.
func (t BlockType) IsBloom() bool {
	return t == BlockBloomChunk || t == BlockGeneralBloomMeta || t == BlockDeleteFamilyBloomMeta
}

func blockTypeFromMagic(m []byte) (BlockType, bool) {
	for t := BlockType(0); t < BlockTrailer; t++ {
		if string(m) == blockMagics[t] {
			return t, true
		}
	}
	return 0, false
}

// ChecksumType is HBase's ChecksumType.
type ChecksumType uint8

// Checksum types as stored in the block header.
const (
	ChecksumNull   ChecksumType = 0
	ChecksumCRC32  ChecksumType = 1
	ChecksumCRC32C ChecksumType = 2
)

// String returns HBase's name.
func (c ChecksumType) String() string {
	switch c {
	case ChecksumNull:
		return "NULL"
	case ChecksumCRC32:
		return "CRC32"
	case ChecksumCRC32C:
		return "CRC32C"
	}
	return "UNKNOWN"
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func (c ChecksumType) sum(b []byte) uint32 {
	if c == ChecksumCRC32 {
		return crc32.ChecksumIEEE(b)
	}
	return crc32.Checksum(b, castagnoli)
}

// Block layout constants.
const (
	HeaderSize              = 33
	DefaultBytesPerChecksum = 16384
	minBytesPerChecksum     = HeaderSize
)

// header is the 33-byte block header.
//
//	+--------+--------------+---------------+------------+-----------+-------------+----------------+
//	| magic  | onDiskSize   | uncompressed  | prevOffset | checksum  | bytesPer    | onDiskDataSize |
//	| (8B)   | w/o header   | size w/o hdr  | (8B)       | type (1B) | checksum(4B)| with header(4B)|
//	|        | (4B)         | (4B)          |            |           |             |                |
//	+--------+--------------+---------------+------------+-----------+-------------+----------------+
//
// onDiskSizeWithoutHeader counts the (compressed) payload and the checksums.
type header struct {
	typ                     BlockType
	onDiskSizeWithoutHeader int32
	uncompressedSize        int32
	prevOffset              int64
	checksumType            ChecksumType
	bytesPerChecksum        int32
	onDiskDataSizeWithHdr   int32
}

func (h *header) encode(dst []byte) {
	copy(dst[0:8], blockMagics[h.typ])
	binary.BigEndian.PutUint32(dst[8:], uint32(h.onDiskSizeWithoutHeader))
	binary.BigEndian.PutUint32(dst[12:], uint32(h.uncompressedSize))
	binary.BigEndian.PutUint64(dst[16:], uint64(h.prevOffset))
	dst[24] = byte(h.checksumType)
	binary.BigEndian.PutUint32(dst[25:], uint32(h.bytesPerChecksum))
	binary.BigEndian.PutUint32(dst[29:], uint32(h.onDiskDataSizeWithHdr))
}

// decodeHeader parses and sanity-checks a header read at offset off.
func decodeHeader(b []byte, off int64) (header, error) {
	var h header
	if len(b) < HeaderSize {
		return h, encoding.CorruptionErrorf("block at offset %d: short header (%d bytes)", off, len(b))
	}
	t, ok := blockTypeFromMagic(b[:8])
	if !ok {
		return h, encoding.CorruptionErrorf("block at offset %d: bad magic %q", off, encoding.FormatBytes(b[:8]))
	}
	h.typ = t
	h.onDiskSizeWithoutHeader = int32(binary.BigEndian.Uint32(b[8:]))
	h.uncompressedSize = int32(binary.BigEndian.Uint32(b[12:]))
	h.prevOffset = int64(binary.BigEndian.Uint64(b[16:]))
	h.checksumType = ChecksumType(b[24])
	h.bytesPerChecksum = int32(binary.BigEndian.Uint32(b[25:]))
	h.onDiskDataSizeWithHdr = int32(binary.BigEndian.Uint32(b[29:]))
	switch {
	case h.onDiskSizeWithoutHeader < 0 || h.uncompressedSize < 0 || h.onDiskDataSizeWithHdr < HeaderSize:
		return h, encoding.CorruptionErrorf("block at offset %d: negative size in header", off)
	case int64(h.onDiskDataSizeWithHdr) > int64(h.onDiskSizeWithoutHeader)+HeaderSize:
		return h, encoding.CorruptionErrorf("block at offset %d: data size %d exceeds on-disk size %d",
			off, h.onDiskDataSizeWithHdr, h.onDiskSizeWithoutHeader+HeaderSize)
	case h.checksumType > ChecksumCRC32C:
		return h, encoding.CorruptionErrorf("block at offset %d: unknown checksum type %d", off, h.checksumType)
	case h.checksumType != ChecksumNull && h.bytesPerChecksum < minBytesPerChecksum:
		return h, encoding.CorruptionErrorf("block at offset %d: bytesPerChecksum %d", off, h.bytesPerChecksum)
	}
	// With NULL checksums there are no checksum bytes: without this check
	// a flipped checksum type would turn verification off unnoticed.
	want := int64(0)
	if h.checksumType != ChecksumNull {
		want = int64(numChecksumChunks(int(h.onDiskDataSizeWithHdr), int(h.bytesPerChecksum))) * 4
	}
	if got := int64(h.onDiskSizeWithoutHeader) + HeaderSize - int64(h.onDiskDataSizeWithHdr); got != want {
		return h, encoding.CorruptionErrorf("block at offset %d: %d checksum bytes, want %d for %s", off, got, want, h.checksumType)
	}
	return h, nil
}

func (h *header) onDiskSize() int { return int(h.onDiskSizeWithoutHeader) + HeaderSize }

func numChecksumChunks(n, bytesPerChecksum int) int {
	return (n + bytesPerChecksum - 1) / bytesPerChecksum
}

// appendChecksums appends one big-endian checksum per bytesPerChecksum chunk of b.
func appendChecksums(dst, b []byte, t ChecksumType, bytesPerChecksum int) []byte {
	for i := 0; i < len(b); i += bytesPerChecksum {
		e := min(i+bytesPerChecksum, len(b))
		dst = binary.BigEndian.AppendUint32(dst, t.sum(b[i:e]))
	}
	return dst
}

// verifyChecksums checks the checksums that follow header+payload in raw.
func verifyChecksums(raw []byte, h *header, off int64) error {
	if h.checksumType == ChecksumNull {
		return nil
	}
	data := raw[:h.onDiskDataSizeWithHdr]
	sums := raw[h.onDiskDataSizeWithHdr:h.onDiskSize()]
	bpc := int(h.bytesPerChecksum)
	for i, c := 0, 0; i < len(data); i, c = i+bpc, c+1 {
		e := min(i+bpc, len(data))
		want := binary.BigEndian.Uint32(sums[c*4:])
		if got := h.checksumType.sum(data[i:e]); got != want {
			return errors.Mark(errors.Newf("block at offset %d (%s, %d bytes on disk): %s checksum mismatch in chunk %d (bytes %d-%d): stored %08x, computed %08x",
				off, h.typ, h.onDiskSize(), h.checksumType, c, i, e, want, got), encoding.ErrCorruption)
		}
	}
	return nil
}

// Block is one decoded block: its header fields and its uncompressed payload
// (without header and checksums). Blocks are immutable once built and may be
// shared through a block cache, except pooled blocks, which an Iterator owns
// and recycles (see pool.go).
type Block struct {
	Type       BlockType
	Offset     int64
	PrevOffset int64
	OnDiskSize int // header + payload + checksums
	// NextOnDiskSize is the on-disk size of the following block when the
	// read also fetched its header, -1 otherwise.
	NextOnDiskSize int
	Data           []byte
	// backing is the size of the allocation Data lives in, which for an
	// uncompressed block also holds the header, checksums and next header.
	backing int
	// buf is the whole pooled buffer of a pooled block (see pool.go); state
	// is blockHeap, blockPooled, blockShared or blockReleased; refs counts
	// a shared block's holders.
	buf   []byte
	mem   offheap.Handle // buf's, if it is off the Go heap
	state uint8
	refs  atomic.Int32
	// restarts is the data block's RestartIndex, built by the first seek
	// that finds the block in the cache (see Reader.dataBlock), or recorded
	// by an Iterator that read the cached block through; nil until then,
	// and always for blocks that are not cached. A cache that is a
	// CacheRecharger charges it to the block when it is attached.
	restarts atomic.Pointer[encoding.RestartIndex]
	// accel is a non-root index block's search aid, built once lookups
	// (which counts them) reaches indexAccelAfter; charged as restarts is.
	accel   atomic.Pointer[indexAccel]
	lookups atomic.Uint32
	// dropped is set when a RefCountingCache drops this heap block, so that
	// a reader that pinned it stops using it (see pin.go).
	dropped atomic.Bool
	// churn is set on a data block read on a miss into a full cache
	// (FullCache), until a lookup finds it: an Iterator that reads it
	// through does not record its RestartIndex (see Iterator.setBlock),
	// and the first seek that finds it does not build one (see
	// Reader.checkedDataBlock).
	churn atomic.Bool
}

// clearChurn clears b's churn mark and reports whether it was set. A hit
// calls it: the mark is read on every hit, written only once.
func (b *Block) clearChurn() bool {
	if !b.churn.Load() {
		return false
	}
	b.churn.Store(false)
	return true
}

// blockOverhead approximates the Go memory a Block holds beyond its data.
const blockOverhead = 96

// MemSize returns the bytes this block keeps alive, for cache accounting:
// its whole backing allocation, rounded as Go's allocator rounds large
// objects to 8 KiB pages (an off-heap buffer is its class's size exactly),
// plus the Block itself.
func (b *Block) MemSize() int64 {
	n := max(b.backing, cap(b.Data))
	if n > 32<<10 && !b.mem.Valid() {
		n = (n + 8<<10 - 1) &^ (8<<10 - 1)
	}
	return int64(n) + blockOverhead
}
