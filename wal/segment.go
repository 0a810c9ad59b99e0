package wal

import (
	"encoding/binary"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/internal/record"
	"github.com/regionkv/regionkv/internal/vfs"
	"google.golang.org/protobuf/encoding/protowire"
)

// Segment file names: a 19-digit zero-padded segment number and ".wal", so
// that sorting names sorts segments in the order they were written. Numbers
// start at 1 and each new segment (on Open and on every roll) takes the
// highest number in the directory plus one.
const (
	segmentSuffix    = ".wal"
	segmentNumDigits = 19
)

// Segment header: magic and version, then a record whose payload is HBase's
// WALHeader protobuf message. Part of the format.
const (
	segmentMagic   = "RKWL"
	segmentVersion = 1
	// magicSize is the size of the magic and the version.
	magicSize = 8
)

// WALHeader field numbers and values, from HBase's WAL.proto.
const (
	hdrHasCompression      protowire.Number = 1
	hdrHasTagCompression   protowire.Number = 3
	hdrWriterClsName       protowire.Number = 4
	hdrCellCodecClsName    protowire.Number = 5
	hdrHasValueCompression protowire.Number = 6

	// CellCodecClassName is the cell codec a segment header names: cells are
	// in KeyValueCodecWithTags form.
	CellCodecClassName = "org.apache.hadoop.hbase.codec.KeyValueCodecWithTags"
	// WriterClassName is the writer a segment header names.
	WriterClassName = "github.com/regionkv/regionkv/wal.Writer"
)

// SegmentName returns the file name of segment number num.
func SegmentName(num uint64) string {
	return fmt.Sprintf("%0*d%s", segmentNumDigits, num, segmentSuffix)
}

// parseSegmentName returns the number of a segment file name, or false if
// name is not one.
func parseSegmentName(name string) (uint64, bool) {
	digits, ok := strings.CutSuffix(name, segmentSuffix)
	if !ok || len(digits) != segmentNumDigits {
		return 0, false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseUint(digits, 10, 64)
	return n, err == nil
}

// ListSegments returns the paths of the segment files in dir in the order
// they were written. Other files are ignored.
func ListSegments(fs vfs.FS, dir string) ([]string, error) {
	names, err := fs.List(dir)
	if err != nil {
		return nil, errors.Wrapf(err, "wal: list %s", dir)
	}
	var paths []string
	for _, name := range names { // sorted, and the names are fixed-width
		if _, ok := parseSegmentName(name); ok {
			paths = append(paths, filepath.Join(dir, name))
		}
	}
	return paths, nil
}

// appendSegmentHeader appends a segment's header to dst.
func appendSegmentHeader(dst []byte) []byte {
	dst = append(dst, segmentMagic...)
	dst = binary.BigEndian.AppendUint32(dst, segmentVersion)
	var h []byte
	h = protowire.AppendTag(h, hdrHasCompression, protowire.VarintType)
	h = protowire.AppendVarint(h, 0)
	h = protowire.AppendTag(h, hdrHasTagCompression, protowire.VarintType)
	h = protowire.AppendVarint(h, 0)
	h = protowire.AppendTag(h, hdrWriterClsName, protowire.BytesType)
	h = protowire.AppendString(h, WriterClassName)
	h = protowire.AppendTag(h, hdrCellCodecClsName, protowire.BytesType)
	h = protowire.AppendString(h, CellCodecClassName)
	h = protowire.AppendTag(h, hdrHasValueCompression, protowire.VarintType)
	h = protowire.AppendVarint(h, 0)
	dst, err := record.Append(dst, h)
	if err != nil {
		panic(errors.AssertionFailedf("wal: segment header: %v", err))
	}
	return dst
}

// ErrUnsupported marks errors about a well-formed segment that this version
// cannot read: another format version, compression or cell codec. Test for
// it with errors.Is from github.com/cockroachdb/errors (it is a mark).
var ErrUnsupported = errors.New("wal: unsupported segment")

// checkHeader checks a segment's WALHeader payload: no compression of any
// kind, and our cell codec (or none named). A malformed message is marked as
// corruption; one asking for what we do not implement, as ErrUnsupported.
func checkHeader(b []byte) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return encoding.CorruptionErrorf("WALHeader: %v", protowire.ParseError(n))
		}
		b = b[n:]
		switch {
		case typ == protowire.VarintType && (num == hdrHasCompression || num == hdrHasTagCompression || num == hdrHasValueCompression):
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return encoding.CorruptionErrorf("WALHeader field %d: %v", num, protowire.ParseError(n))
			}
			if v != 0 {
				return errors.Mark(errors.Newf("WALHeader field %d: compressed segments are not supported", num), ErrUnsupported)
			}
			b = b[n:]
		case typ == protowire.BytesType && num == hdrCellCodecClsName:
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return encoding.CorruptionErrorf("WALHeader field %d: %v", num, protowire.ParseError(n))
			}
			if string(v) != CellCodecClassName {
				return errors.Mark(errors.Newf("WALHeader: cell codec %q is not supported", v), ErrUnsupported)
			}
			b = b[n:]
		default:
			n := protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return encoding.CorruptionErrorf("WALHeader field %d: %v", num, protowire.ParseError(n))
			}
			b = b[n:]
		}
	}
	return nil
}
