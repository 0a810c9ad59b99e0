package wal

import (
	"encoding/binary"
	"hash/crc32"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/internal/record"
	"google.golang.org/protobuf/encoding/protowire"
)

// PreparedEntry is an entry framed as a record, checksum included, before
// its sequence id is final: the region encodes it before it takes any lock,
// and AppendPrepared, under the mvcc lock, only copies it and patches in the
// real sequence id. The bytes appended are exactly those Append would write.
//
// The sequence id is a varint inside the checksummed WALKey, so changing it
// changes the checksum. CRC-32C is linear: for records of one length,
// crc(a) ^ crc(b) is the raw CRC of a ^ b, and a ^ b is zero outside the
// varint, so the change is the raw CRC of the varint's differing bytes,
// carried over the bytes after them by one multiplication modulo the CRC
// polynomial (by x^(8n), computed in Prepare). A varint of another length
// changes the record's length and shifts the bytes after it; then
// AppendPrepared re-frames the record and checksums it in full, which
// happens only when the write point crosses a power of 128 between Prepare
// and AppendPrepared.
//
// The zero value is ready for Prepare; a PreparedEntry may be prepared and
// appended again and again, reusing its buffer. It is not safe for
// concurrent use.
type PreparedEntry struct {
	// buf is the framed record: header, then payload.
	buf []byte
	// seqOff and seqLen locate the sequence id's varint in buf; seq is the
	// value it holds.
	seqOff, seqLen int
	seq            uint64
	// crc is the record's checksum before masking.
	crc uint32
	// shift is x^(8n) modulo the polynomial, n the number of bytes after
	// the varint: what carries a change of the varint to the checksum.
	shift uint32
}

// Size returns the size of the prepared record in bytes.
func (p *PreparedEntry) Size() int { return len(p.buf) }

// Prepare encodes the entry for key and edit into p, with key.SeqNum as
// the expected sequence id: the sequence id AppendPrepared will get, or a
// number just below it (the region passes its write point plus one), so
// that its varint most likely has the final length. It does not keep key,
// edit or their slices. It returns the errors of Append for an invalid
// entry; then p holds no entry.
func (p *PreparedEntry) Prepare(key *Key, edit *Edit) error {
	p.buf = p.buf[:0]
	if err := validateEdit(key, edit); err != nil {
		return err
	}
	buf := append(p.buf, 0, 0, 0, 0, 0, 0, 0, 0) // the record header, filled in below
	buf, seqOff := appendEntryAt(buf, key, edit)
	n := len(buf) - record.HeaderSize
	if n > record.MaxPayloadSize {
		return errors.Newf("wal: entry of sequence id %d: payload of %d bytes is above %d",
			key.SeqNum, n, record.MaxPayloadSize)
	}
	binary.BigEndian.PutUint32(buf[0:4], uint32(n))
	crc := crc32.Update(crc32.Update(0, castagnoli, buf[0:4]), castagnoli, buf[record.HeaderSize:])
	binary.BigEndian.PutUint32(buf[4:8], maskCRC(crc))
	p.buf, p.seqOff, p.seqLen, p.seq, p.crc = buf, seqOff, protowire.SizeVarint(key.SeqNum), key.SeqNum, crc
	p.shift = xPow8n(uint64(len(buf) - seqOff - p.seqLen))
	return nil
}

// sameLength reports whether the record with sequence id seq is as long as
// the one prepared (Size), so that appendTo does not re-frame it.
func (p *PreparedEntry) sameLength(seq uint64) bool {
	return protowire.SizeVarint(seq) == p.seqLen
}

// appendTo appends the prepared record, with sequence id seq, to dst.
//
// REQUIRES: p holds an entry (Prepare succeeded), seq > 0.
func (p *PreparedEntry) appendTo(dst []byte, seq uint64) ([]byte, error) {
	if protowire.SizeVarint(seq) != p.seqLen {
		return p.appendReframed(dst, seq)
	}
	p.setSeq(seq)
	return append(dst, p.buf...), nil
}

// setSeq patches sequence id seq, whose varint is as long as the one
// prepared, and the checksum into p's record.
func (p *PreparedEntry) setSeq(seq uint64) {
	if seq != p.seq {
		var old, cur [binary.MaxVarintLen64]byte
		protowire.AppendVarint(old[:0], p.seq)
		protowire.AppendVarint(cur[:0], seq)
		var diff [binary.MaxVarintLen64]byte
		for i := 0; i < p.seqLen; i++ {
			diff[i] = old[i] ^ cur[i]
		}
		p.crc ^= gfMul(rawCRC(diff[:p.seqLen]), p.shift)
		copy(p.buf[p.seqOff:], cur[:p.seqLen])
		binary.BigEndian.PutUint32(p.buf[4:8], maskCRC(p.crc))
		p.seq = seq
	}
}

// appendReframed appends the prepared record to dst with seq's varint in
// place of the old one, of another length: the payload length, the WALKey
// length and the checksum all change.
func (p *PreparedEntry) appendReframed(dst []byte, seq uint64) ([]byte, error) {
	payload := p.buf[record.HeaderSize:]
	keyLen, m := protowire.ConsumeVarint(payload)
	if m < 0 {
		return dst, errors.AssertionFailedf("wal: prepared entry without a WALKey length")
	}
	keyLen = keyLen - uint64(p.seqLen) + uint64(protowire.SizeVarint(seq))
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0, 0, 0, 0, 0)
	dst = protowire.AppendVarint(dst, keyLen)
	dst = append(dst, p.buf[record.HeaderSize+m:p.seqOff]...)
	dst = protowire.AppendVarint(dst, seq)
	dst = append(dst, p.buf[p.seqOff+p.seqLen:]...)
	n := len(dst) - start - record.HeaderSize
	if n > record.MaxPayloadSize {
		return dst[:start], errors.Newf("wal: entry of sequence id %d: payload of %d bytes is above %d",
			seq, n, record.MaxPayloadSize)
	}
	h := dst[start:]
	binary.BigEndian.PutUint32(h[0:4], uint32(n))
	crc := crc32.Update(crc32.Update(0, castagnoli, h[0:4]), castagnoli, h[record.HeaderSize:])
	binary.BigEndian.PutUint32(h[4:8], maskCRC(crc))
	return dst, nil
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// castagnoliReflected is the CRC-32C polynomial in the bit order of the
// checksum register (bit 31 holds the coefficient of x^0).
const castagnoliReflected = 0x82f63b78

// maskCRC masks a record checksum as internal/record does (rotate right by
// 15 bits, add a constant); the record format fixes it.
func maskCRC(c uint32) uint32 { return (c>>15 | c<<17) + 0xa282ead8 }

// rawCRC returns the CRC-32C of b without the initial and final inversion:
// the linear part of the checksum, which is what a difference contributes.
//
// It runs the table a byte at a time, for the few bytes of a varint: b
// does not escape, as it does into crc32.Update, which made every patch of
// a sequence id allocate.
func rawCRC(b []byte) uint32 {
	var c uint32
	for _, x := range b {
		c = castagnoli[byte(c)^x] ^ c>>8
	}
	return c
}

// gfMul multiplies a and b modulo the CRC-32C polynomial, both in register
// bit order. It has no data-dependent branches, which would mispredict.
func gfMul(a, b uint32) uint32 {
	var p uint32
	for i := 0; i < 32; i++ {
		p ^= b & -(a >> 31) // the coefficient of x^i in a is its bit 31-i
		a <<= 1
		b = b>>1 ^ castagnoliReflected&-(b&1) // b *= x
	}
	return p
}

// xPow8Digits[j][d] is x^(8·d·256^j) modulo the polynomial: xPow8n
// multiplies one per byte of n, so an entry below 64 KiB takes at most one
// multiplication.
var xPow8Digits = func() (t [4][256]uint32) {
	x8 := uint32(1) << 31 // x^0
	for i := 0; i < 8; i++ {
		x8 = gfMul(x8, 1<<30) // times x
	}
	step := x8 // x^(8·256^j)
	for j := range t {
		t[j][0] = 1 << 31
		for d := 1; d < 256; d++ {
			t[j][d] = gfMul(t[j][d-1], step)
		}
		step = gfMul(t[j][255], step)
	}
	return t
}()

// xPow8n returns x^(8n) modulo the polynomial: multiplying a raw CRC by it
// is running the CRC register over n zero bytes.
//
// REQUIRES: n < 2^32 (entries are at most record.MaxPayloadSize).
func xPow8n(n uint64) uint32 {
	r := xPow8Digits[0][n&0xff]
	for j := 1; j < len(xPow8Digits) && n>>(8*j) != 0; j++ {
		if d := n >> (8 * j) & 0xff; d != 0 {
			r = gfMul(r, xPow8Digits[j][d])
		}
	}
	return r
}
