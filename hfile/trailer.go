package hfile

import (
	"encoding/binary"
	"math"

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

// trailerFields names the FileTrailerProto fields by number, as HBase's
// HFile.proto does, and gives the wire type each must arrive with. Fields 14
// to 16 (key management, newer HBase) are known so that their wire types are
// checked, but are otherwise ignored.
var trailerFields = [...]struct {
	name string
	typ  protowire.Type
}{
	1:  {"file_info_offset", protowire.VarintType},
	2:  {"load_on_open_data_offset", protowire.VarintType},
	3:  {"uncompressed_data_index_size", protowire.VarintType},
	4:  {"total_uncompressed_bytes", protowire.VarintType},
	5:  {"data_index_count", protowire.VarintType},
	6:  {"meta_index_count", protowire.VarintType},
	7:  {"entry_count", protowire.VarintType},
	8:  {"num_data_index_levels", protowire.VarintType},
	9:  {"first_data_block_offset", protowire.VarintType},
	10: {"last_data_block_offset", protowire.VarintType},
	11: {"comparator_class_name", protowire.BytesType},
	12: {"compression_codec", protowire.VarintType},
	13: {"encryption_key", protowire.BytesType},
	14: {"key_namespace", protowire.BytesType},
	15: {"kek_metadata", protowire.BytesType},
	16: {"kek_checksum", protowire.VarintType},
}

// ErrNotHFile marks the error of opening a file that is not an HFile at
// all: too short for a trailer, or without the trailer's magic and a
// version. Such errors are marked encoding.ErrCorruption too, as a store
// file that is not an HFile is damaged.
var ErrNotHFile = errors.New("not an HFile")

func notHFile(format string, args ...any) error {
	return errors.Mark(errors.Mark(errors.Newf("not an HFile: "+format, args...), ErrNotHFile), encoding.ErrCorruption)
}

// requiredTrailerFields are the fields every HBase version writes
// (FixedFileTrailer.serializeAsPB sets 1 to 12 unconditionally; we leave
// out 9 and 10 in an empty file). The trailer has no checksum, and a flipped
// bit in a tag turns a field into another or an unknown one: were a missing
// field read as its default, entry_count would read as 0 and the file would
// look empty.
var requiredTrailerFields = [...]protowire.Number{1, 2, 3, 4, 5, 6, 7, 8, 11, 12}

// decodeTrailer parses the last TrailerSize bytes of a file of fileSize
// bytes and checks what it can of the trailer on its own: the version, the
// magic, the message framing, each field's wire type and range, and that
// the offsets lie inside the file and in order. Reader.open checks the rest
// against the load-on-open section. Errors are marked encoding.ErrCorruption
// and name the field and the trailer's offset.
func decodeTrailer(b []byte, fileSize int64) (*Trailer, error) {
	if len(b) < TrailerSize {
		return nil, notHFile("its %d bytes are fewer than an HFile trailer's %d", fileSize, TrailerSize)
	}
	at := fileSize - TrailerSize
	bad := func(format string, args ...interface{}) error {
		return errors.Wrapf(encoding.CorruptionErrorf(format, args...), "trailer at offset %d", at)
	}
	v := binary.BigEndian.Uint32(b[TrailerSize-4:])
	t := &Trailer{MajorVersion: int(v & 0xFFFFFF), MinorVersion: int(v >> 24), FirstDataBlockOffset: -1, LastDataBlockOffset: -1,
		CompressionCodec: CompressionNone}
	// HBase reads minor versions 0 to 3 of v3 and only 3 of v2 (with a
	// protobuf trailer); anything above 3 is no version it wrote.
	versionOK := (t.MajorVersion == 3 && t.MinorVersion <= MinorVersion) || (t.MajorVersion == 2 && t.MinorVersion == 3)
	magicOK := string(b[:8]) == trailerMagic
	switch {
	case !versionOK && !magicOK:
		// Neither the magic nor the version: some other kind of file,
		// rather than an HFile with a damaged trailer.
		return nil, notHFile("no HFile trailer (magic %q and a version) in its last %d bytes", trailerMagic, TrailerSize)
	case !versionOK:
		return nil, bad("unsupported HFile version %d.%d (want 3, or 2 with minor 3)", t.MajorVersion, t.MinorVersion)
	case !magicOK:
		return nil, bad("bad trailer magic %q", encoding.FormatBytes(b[:8]))
	}
	l, n := protowire.ConsumeVarint(b[8:])
	if n < 0 || l > uint64(TrailerSize-4-8-n) {
		return nil, bad("bad trailer message length")
	}
	end := 8 + n + int(l)
	// HBase pads the message with zeros; a non-zero byte there means the
	// length prefix (or the padding) is damaged.
	for i := end; i < TrailerSize-4; i++ {
		if b[i] != 0 {
			return nil, bad("non-zero byte %#x at trailer offset %d, after the %d-byte message", b[i], i, l)
		}
	}
	pb := b[8+n : end]
	var seen [len(trailerFields)]bool
	for len(pb) > 0 {
		pos := end - len(pb)
		num, typ, n := protowire.ConsumeTag(pb)
		if n < 0 {
			return nil, bad("bad field tag at trailer offset %d", pos)
		}
		pb = pb[n:]
		known := num > 0 && int(num) < len(trailerFields) && trailerFields[num].name != ""
		if known {
			f := trailerFields[num]
			if typ != f.typ {
				return nil, bad("field %d (%s) at trailer offset %d has wire type %d, want %d", num, f.name, pos, typ, f.typ)
			}
			if seen[num] {
				return nil, bad("field %d (%s) repeated at trailer offset %d", num, f.name, pos)
			}
			seen[num] = true
		} else if typ == protowire.StartGroupType || typ == protowire.EndGroupType {
			// No FileTrailerProto version has groups.
			return nil, bad("unknown field %d at trailer offset %d is a group", num, pos)
		}
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
			return nil, bad("field %d at trailer offset %d is truncated", num, pos)
		}
		pb = pb[n:]
		if !known {
			continue // a field of a newer HBase
		}
		name := trailerFields[num].name
		switch num {
		case 1, 2, 3, 4, 7:
			if x > math.MaxInt64 {
				return nil, bad("%s %d out of range", name, x)
			}
		case 5, 6, 8:
			// uint32 in the proto, an int in HBase.
			if x > math.MaxInt32 {
				return nil, bad("%s %d out of range", name, x)
			}
		case 9, 10:
			// HBase writes -1 (UNSET) as a 64-bit varint for an empty file.
			if int64(x) < -1 {
				return nil, bad("%s %d out of range", name, int64(x))
			}
		case 12:
			if x >= uint64(len(compressionNames)) {
				return nil, bad("%s %d is no HBase compression algorithm", name, x)
			}
		}
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
	for _, num := range requiredTrailerFields {
		if !seen[num] {
			return nil, bad("field %d (%s) missing", num, trailerFields[num].name)
		}
	}
	if t.EncryptionKey != nil {
		return nil, errors.Newf("encrypted HFiles are not supported")
	}
	if err := t.check(fileSize); err != nil {
		return nil, errors.Wrapf(err, "trailer at offset %d", at)
	}
	return t, nil
}

// check cross-checks the trailer's fields with each other and the file size:
// the sections lie in order inside the file (first data block <= last data
// block < load-on-open < file info < trailer), a file has cells iff it has
// data blocks and root index entries, and the sizes are plausible.
func (t *Trailer) check(fileSize int64) error {
	body := uint64(fileSize - TrailerSize)
	// Entries in the root data index, data blocks (first and last offsets)
	// and cells exist together or not at all: a file that only looked empty
	// would lose its rows without an error.
	hasData := t.EntryCount > 0
	switch {
	case t.LoadOnOpenDataOffset >= body:
		return encoding.CorruptionErrorf("load_on_open_data_offset %d outside the file body of %d bytes", t.LoadOnOpenDataOffset, body)
	case t.FileInfoOffset <= t.LoadOnOpenDataOffset || t.FileInfoOffset >= body:
		// The data root index and the meta index come first.
		return encoding.CorruptionErrorf("file_info_offset %d not between load_on_open_data_offset %d and the trailer at %d",
			t.FileInfoOffset, t.LoadOnOpenDataOffset, body)
	case t.NumDataIndexLevels > maxIndexLevels || (t.NumDataIndexLevels < 1 && t.DataIndexCount != 0):
		return encoding.CorruptionErrorf("num_data_index_levels %d (data_index_count %d)", t.NumDataIndexLevels, t.DataIndexCount)
	case hasData != (t.DataIndexCount > 0):
		return encoding.CorruptionErrorf("entry_count %d but data_index_count %d", t.EntryCount, t.DataIndexCount)
	case hasData && t.FirstDataBlockOffset < 0:
		return encoding.CorruptionErrorf("entry_count %d but first_data_block_offset %d", t.EntryCount, t.FirstDataBlockOffset)
	case hasData && t.LastDataBlockOffset < t.FirstDataBlockOffset:
		return encoding.CorruptionErrorf("last_data_block_offset %d before first_data_block_offset %d", t.LastDataBlockOffset, t.FirstDataBlockOffset)
	case hasData && uint64(t.LastDataBlockOffset) >= t.LoadOnOpenDataOffset:
		return encoding.CorruptionErrorf("last_data_block_offset %d not before load_on_open_data_offset %d",
			t.LastDataBlockOffset, t.LoadOnOpenDataOffset)
	case !hasData && (t.FirstDataBlockOffset > 0 || t.LastDataBlockOffset > 0):
		// Empty: -1 (UNSET), or 0 as old writers left them.
		return encoding.CorruptionErrorf("entry_count 0 but first_data_block_offset %d, last_data_block_offset %d",
			t.FirstDataBlockOffset, t.LastDataBlockOffset)
	case t.TotalUncompressedBytes < TrailerSize:
		// Every writer counts the trailer.
		return encoding.CorruptionErrorf("total_uncompressed_bytes %d smaller than the trailer", t.TotalUncompressedBytes)
	case hasData && t.EntryCount > t.TotalUncompressedBytes:
		// A cell takes at least a byte of (uncompressed) block.
		return encoding.CorruptionErrorf("entry_count %d larger than total_uncompressed_bytes %d", t.EntryCount, t.TotalUncompressedBytes)
	}
	return nil
}
