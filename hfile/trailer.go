package hfile

import (
	"encoding/binary"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/encoding"
	"google.golang.org/protobuf/encoding/protowire"
)

// Trailer constants. A v3 trailer always takes the last TrailerSize bytes.
const (
	TrailerSize  = 4096
	MajorVersion = 3
	MinorVersion = 3
	trailerMagic = "TRABLK\"$"
)

// Trailer is HBase's FixedFileTrailer (v3): the fixed-size block at the end
// of the file that locates everything else. Encoded as the FileTrailerProto
// message of HBase's HFile.proto, with the same field numbers.
type Trailer struct {
	FileInfoOffset            uint64      // 1
	LoadOnOpenDataOffset      uint64      // 2
	UncompressedDataIndexSize uint64      // 3
	TotalUncompressedBytes    uint64      // 4
	DataIndexCount            uint32      // 5
	MetaIndexCount            uint32      // 6
	EntryCount                uint64      // 7
	NumDataIndexLevels        uint32      // 8
	FirstDataBlockOffset      int64       // 9; -1 when the file has no data blocks
	LastDataBlockOffset       int64       // 10; start of the last data block
	ComparatorClassName       string      // 11
	CompressionCodec          Compression // 12
	EncryptionKey             []byte      // 13

	MajorVersion int
	MinorVersion int
}

func (t *Trailer) encode() []byte {
	var pb []byte
	u := func(num protowire.Number, v uint64) {
		pb = protowire.AppendTag(pb, num, protowire.VarintType)
		pb = protowire.AppendVarint(pb, v)
	}
	u(1, t.FileInfoOffset)
	u(2, t.LoadOnOpenDataOffset)
	u(3, t.UncompressedDataIndexSize)
	u(4, t.TotalUncompressedBytes)
	u(5, uint64(t.DataIndexCount))
	u(6, uint64(t.MetaIndexCount))
	u(7, t.EntryCount)
	u(8, uint64(t.NumDataIndexLevels))
	if t.FirstDataBlockOffset >= 0 {
		u(9, uint64(t.FirstDataBlockOffset))
	}
	if t.LastDataBlockOffset >= 0 {
		u(10, uint64(t.LastDataBlockOffset))
	}
	pb = protowire.AppendTag(pb, 11, protowire.BytesType)
	pb = protowire.AppendString(pb, t.ComparatorClassName)
	u(12, uint64(t.CompressionCodec.Ordinal()))
	if t.EncryptionKey != nil {
		pb = protowire.AppendTag(pb, 13, protowire.BytesType)
		pb = protowire.AppendBytes(pb, t.EncryptionKey)
	}
	out := make([]byte, TrailerSize)
	n := copy(out, trailerMagic)
	b := protowire.AppendVarint(out[:n], uint64(len(pb)))
	b = append(b, pb...)
	if len(b) > TrailerSize-4 {
		// Cannot happen with the fields above: they fit in a few hundred bytes.
		panic(errors.AssertionFailedf("trailer of %d bytes", len(b)))
	}
	binary.BigEndian.PutUint32(out[TrailerSize-4:], uint32(MinorVersion)<<24|uint32(MajorVersion))
	return out
}

// decodeTrailer parses the last min(fileSize, TrailerSize) bytes of a file.
func decodeTrailer(b []byte, fileSize int64) (*Trailer, error) {
	if len(b) < TrailerSize {
		return nil, encoding.CorruptionErrorf("file of %d bytes is too small for an HFile v3 trailer", fileSize)
	}
	v := binary.BigEndian.Uint32(b[TrailerSize-4:])
	t := &Trailer{MajorVersion: int(v & 0xFFFFFF), MinorVersion: int(v >> 24), FirstDataBlockOffset: -1, LastDataBlockOffset: -1,
		CompressionCodec: CompressionNone}
	if !(t.MajorVersion == 3 || (t.MajorVersion == 2 && t.MinorVersion >= 3)) {
		return nil, encoding.CorruptionErrorf("unsupported HFile version %d.%d (want 3, or 2 with minor >= 3)", t.MajorVersion, t.MinorVersion)
	}
	if string(b[:8]) != trailerMagic {
		return nil, encoding.CorruptionErrorf("bad trailer magic %q at offset %d", encoding.FormatBytes(b[:8]), fileSize-TrailerSize)
	}
	l, n := protowire.ConsumeVarint(b[8:])
	if n < 0 || l > uint64(TrailerSize-4-8-n) {
		return nil, encoding.CorruptionErrorf("bad trailer message length")
	}
	pb := b[8+n : 8+n+int(l)]
	for len(pb) > 0 {
		num, typ, n := protowire.ConsumeTag(pb)
		if n < 0 {
			return nil, encoding.CorruptionErrorf("bad trailer field tag")
		}
		pb = pb[n:]
		var x uint64
		var bs []byte
		switch typ {
		case protowire.VarintType:
			x, n = protowire.ConsumeVarint(pb)
		case protowire.BytesType:
			bs, n = protowire.ConsumeBytes(pb)
		default:
			n = protowire.ConsumeFieldValue(num, typ, pb)
		}
		if n < 0 {
			return nil, encoding.CorruptionErrorf("bad trailer field %d", num)
		}
		pb = pb[n:]
		switch num {
		case 1:
			t.FileInfoOffset = x
		case 2:
			t.LoadOnOpenDataOffset = x
		case 3:
			t.UncompressedDataIndexSize = x
		case 4:
			t.TotalUncompressedBytes = x
		case 5:
			t.DataIndexCount = uint32(x)
		case 6:
			t.MetaIndexCount = uint32(x)
		case 7:
			t.EntryCount = x
		case 8:
			t.NumDataIndexLevels = uint32(x)
		case 9:
			t.FirstDataBlockOffset = int64(x)
		case 10:
			t.LastDataBlockOffset = int64(x)
		case 11:
			t.ComparatorClassName = string(bs)
		case 12:
			t.CompressionCodec = CompressionOfOrdinal(uint32(x))
		case 13:
			t.EncryptionKey = append([]byte(nil), bs...)
		}
	}
	body := uint64(fileSize - TrailerSize)
	switch {
	case t.LoadOnOpenDataOffset >= body || t.FileInfoOffset >= body || t.FileInfoOffset < t.LoadOnOpenDataOffset:
		return nil, encoding.CorruptionErrorf("trailer offsets (load-on-open %d, file info %d) outside the file body of %d bytes",
			t.LoadOnOpenDataOffset, t.FileInfoOffset, body)
	case t.NumDataIndexLevels < 1 || t.NumDataIndexLevels > 16:
		if t.DataIndexCount != 0 || t.NumDataIndexLevels > 16 {
			return nil, encoding.CorruptionErrorf("trailer has %d data index levels", t.NumDataIndexLevels)
		}
	case t.EncryptionKey != nil:
		return nil, errors.Newf("encrypted HFiles are not supported")
	}
	if t.LastDataBlockOffset >= 0 && uint64(t.LastDataBlockOffset) >= t.LoadOnOpenDataOffset {
		return nil, encoding.CorruptionErrorf("trailer: last data block offset %d beyond load-on-open offset %d",
			t.LastDataBlockOffset, t.LoadOnOpenDataOffset)
	}
	return t, nil
}
