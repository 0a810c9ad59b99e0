// Package record frames the WAL's records: each record is a payload of 1 to
// MaxPayloadSize bytes behind a length and a checksum, so a reader can tell a
// whole record from a record cut short or damaged.
//
// # Usage
//
// A writer appends records to a buffer and writes the buffer out however it
// likes (the WAL batches many records into one write):
//
//	buf, start := record.Start(buf)
//	buf = append(buf, payload...)
//	buf, err := record.Finish(buf, start)
//
// A reader reads them back in order, one allocation per payload:
//
//	r := record.NewReader(file, offset, size)
//	for {
//		payload, err := r.Next()
//		if err == io.EOF { break }                    // clean end, on a record boundary
//		if record.IsInvalidRecord(err) { ... }         // torn or corrupt: the caller decides (see below)
//		...
//	}
//
// Functions are safe for concurrent use; a Reader is not.
//
// # Format
//
// These constants and this layout are part of the on-disk format and must
// not change.
//
//	+------------+--------------+--- ... ---+
//	| len (4B)   | crc (4B)     | payload   |
//	+------------+--------------+--- ... ---+
//
// len is the payload length, big-endian, 1 ≤ len ≤ MaxPayloadSize: zero is
// never valid, so a run of zero bytes (a zeroed tail after a crash) never
// parses as a record. crc is CRC-32C (Castagnoli) over the 4 len bytes
// followed by the payload, masked as LevelDB masks it
// (rotate right by 15 bits, add 0xa282ead8) and stored big-endian. Covering
// len means a damaged length is caught like damaged data; masking means a
// payload that itself contains framed records (a cell value holding a WAL
// segment, say) does not checksum to a value that could be mistaken for its
// own header.
//
// # Invalid records
//
// Next returns one of three errors for a record that does not check out,
// all recognised by IsInvalidRecord: ErrTruncated (the data ends inside the
// header or the payload), ErrInvalidLength (len is 0 or above
// MaxPayloadSize) and ErrChecksum. The framing alone cannot tell a record
// torn by a crash from one damaged later; FindValid lets the caller look for
// intact records after the bad one, which is how the WAL decides (see wal's
// package comment).
package record

import (
	"bufio"
	"encoding/binary"
	"hash/crc32"
	"io"

	"github.com/cockroachdb/errors"
)

// HeaderSize is the size of a record's header: length and checksum.
const HeaderSize = 8

// MaxPayloadSize is the largest payload a record may carry (256 MiB). It
// bounds what a reader allocates for a damaged length.
const MaxPayloadSize = 256 << 20

const crcMaskDelta = 0xa282ead8

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Errors for records that do not check out. They are returned as is (not
// wrapped) by Next, and IsInvalidRecord recognises each.
var (
	// ErrTruncated: the data ends inside the record's header or payload.
	ErrTruncated = errors.New("regionkv/record: truncated record")
	// ErrInvalidLength: the length is zero or above MaxPayloadSize.
	ErrInvalidLength = errors.New("regionkv/record: invalid record length")
	// ErrChecksum: the checksum does not match the length and payload.
	ErrChecksum = errors.New("regionkv/record: record checksum mismatch")
)

// IsInvalidRecord reports whether err says a record is torn or damaged.
func IsInvalidRecord(err error) bool {
	return errors.Is(err, ErrTruncated) || errors.Is(err, ErrInvalidLength) || errors.Is(err, ErrChecksum)
}

func mask(c uint32) uint32 { return (c>>15 | c<<17) + crcMaskDelta }

// checksum returns the masked CRC of the 4 length bytes and the payload.
func checksum(lenBytes, payload []byte) uint32 {
	c := crc32.Update(0, castagnoli, lenBytes)
	return mask(crc32.Update(c, castagnoli, payload))
}

// Start appends room for a record header to dst and returns the buffer and
// the offset of the header, for Finish. The caller then appends the payload.
func Start(dst []byte) ([]byte, int) {
	start := len(dst)
	return append(dst, make([]byte, HeaderSize)...), start
}

// Finish fills in the header of the record that Start began at start, whose
// payload is everything appended after it. On error (an empty or too large
// payload) it returns dst cut back to start, without the record.
func Finish(dst []byte, start int) ([]byte, error) {
	n := len(dst) - start - HeaderSize
	if n <= 0 || n > MaxPayloadSize {
		return dst[:start], errors.Newf("regionkv/record: payload of %d bytes is outside [1, %d]", n, MaxPayloadSize)
	}
	h := dst[start : start+HeaderSize]
	binary.BigEndian.PutUint32(h[0:4], uint32(n))
	binary.BigEndian.PutUint32(h[4:8], checksum(h[0:4], dst[start+HeaderSize:]))
	return dst, nil
}

// Append appends payload to dst as one record.
func Append(dst, payload []byte) ([]byte, error) {
	dst, start := Start(dst)
	dst = append(dst, payload...)
	return Finish(dst, start)
}

// Decode decodes the record at the start of b and returns its payload
// (aliasing b) and the record's total size. Errors are as Next's.
func Decode(b []byte) (payload []byte, size int, err error) {
	if len(b) < HeaderSize {
		return nil, 0, ErrTruncated
	}
	n := binary.BigEndian.Uint32(b[0:4])
	if n == 0 || n > MaxPayloadSize {
		return nil, 0, ErrInvalidLength
	}
	if uint64(len(b)-HeaderSize) < uint64(n) {
		return nil, 0, ErrTruncated
	}
	payload = b[HeaderSize : HeaderSize+int(n)]
	if binary.BigEndian.Uint32(b[4:8]) != checksum(b[0:4], payload) {
		return nil, 0, ErrChecksum
	}
	return payload, HeaderSize + int(n), nil
}

// Reader reads records sequentially from a section of an io.ReaderAt.
type Reader struct {
	br   *bufio.Reader
	off  int64 // offset of the next record
	end  int64
	base int64 // offset of the section's start
	hdr  [HeaderSize]byte
	sect *io.SectionReader
}

// NewReader returns a Reader over r's bytes [off, size).
func NewReader(r io.ReaderAt, off, size int64) *Reader {
	sect := io.NewSectionReader(r, off, size-off)
	return &Reader{br: bufio.NewReaderSize(sect, 64<<10), off: off, end: size, base: off, sect: sect}
}

// Offset returns the offset of the record the next call to Next reads, which
// after an error is the offset of the bad record.
func (r *Reader) Offset() int64 { return r.off }

// Next returns the next record's payload in a new slice that the caller
// owns. At the end of the section, on a record boundary, it returns io.EOF.
// A torn or damaged record returns ErrTruncated, ErrInvalidLength or
// ErrChecksum, and Offset stays at that record, so every later call returns
// the same error. An I/O error is returned wrapped.
func (r *Reader) Next() ([]byte, error) {
	left := r.end - r.off
	if left == 0 {
		return nil, io.EOF
	}
	if left < HeaderSize {
		return nil, ErrTruncated
	}
	if _, err := io.ReadFull(r.br, r.hdr[:]); err != nil {
		return nil, r.readErr(err)
	}
	n := binary.BigEndian.Uint32(r.hdr[0:4])
	if n == 0 || n > MaxPayloadSize {
		r.rewind()
		return nil, ErrInvalidLength
	}
	if int64(n) > left-HeaderSize {
		r.rewind()
		return nil, ErrTruncated
	}
	payload := make([]byte, n)
	if _, err := io.ReadFull(r.br, payload); err != nil {
		return nil, r.readErr(err)
	}
	if binary.BigEndian.Uint32(r.hdr[4:8]) != checksum(r.hdr[0:4], payload) {
		r.rewind()
		return nil, ErrChecksum
	}
	r.off += HeaderSize + int64(n)
	return payload, nil
}

// rewind repositions the buffered reader at r.off, so that the bad record is
// read again by the next call.
func (r *Reader) rewind() {
	_, _ = r.sect.Seek(r.off-r.base, io.SeekStart)
	r.br.Reset(r.sect)
}

func (r *Reader) readErr(err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		// The file shrank under us.
		r.rewind()
		return ErrTruncated
	}
	return errors.Wrapf(err, "regionkv/record: read at offset %d", r.off)
}

// FindValid reports the offset of the first position in b, at or after from,
// where an intact record starts for which accept (if not nil) returns true.
// It tries every byte position, so its cost grows with the length of b after
// from times the plausible lengths it meets; zero bytes and lengths beyond
// the end of b are rejected at once.
func FindValid(b []byte, from int, accept func(payload []byte) bool) (int, bool) {
	for i := from; i+HeaderSize < len(b); i++ {
		payload, _, err := Decode(b[i:])
		if err != nil {
			continue
		}
		if accept == nil || accept(payload) {
			return i, true
		}
	}
	return 0, false
}
