package blockcodec

import (
	"encoding/binary"
	"slices"

	"github.com/cockroachdb/errors"
	"github.com/golang/snappy"
)

// Snappy is Hadoop's SnappyCodec: each chunk is one raw snappy block (the
// block format, not snappy's framed stream format).
type Snappy struct{}

// SnappyMaxChunk is the most raw bytes SnappyCodec compresses as one chunk:
// its default buffer (io.compression.codec.snappy.buffersize, 256 KiB) less
// the codec's allowance for incompressible input, bufferSize/6 + 32. Hadoop
// sizes its decompression buffer the same way, so it can read every chunk
// we write.
const SnappyMaxChunk = snappyBufferSize - (snappyBufferSize/6 + 32)

const snappyBufferSize = 256 << 10

// maxSnappyRatio bounds a valid snappy block's decoded size by its encoded
// size: no op yields more than 64 bytes from 3 (a copy with a 2-byte
// offset), so a block whose header claims more is corrupt, and is refused
// before anything is allocated for it.
const maxSnappyRatio = 22

var _ Codec = Snappy{}

// MaxChunk returns SnappyMaxChunk.
func (Snappy) MaxChunk() int { return SnappyMaxChunk }

// AppendEncoded appends the snappy block of chunk to dst. A chunk that
// snappy cannot shrink by at least an eighth is written as one literal
// instead (see appendStored): still a snappy block any decoder reads, but
// one whose bytes a reader can use in place (SnappyStored).
func (Snappy) AppendEncoded(dst, chunk []byte) []byte {
	at := len(dst)
	dst = slices.Grow(dst, snappy.MaxEncodedLen(len(chunk)))
	// With that much room, Encode writes into dst rather than allocating.
	enc := snappy.Encode(dst[at:cap(dst)], chunk)
	if len(enc) > len(chunk)-len(chunk)/8 {
		return appendStored(dst[:at], chunk)
	}
	return dst[:at+len(enc)]
}

// appendStored appends chunk to dst as a snappy block of one literal: the
// varint of its length, a literal tag for its length, and the bytes. Such
// a block is at most 10 bytes longer than chunk, and decoding it is a copy
// (Pebble applies the same rule, an eighth, to keep a block uncompressed).
// Snappy's format allows a literal of up to 2^32 bytes, and its decoders
// (the C++ one Hadoop calls, golang/snappy, klauspost/compress/s2) read one
// of any length; encoders emit literals of at most 64 KiB only because they
// look for matches in 64 KiB windows.
func appendStored(dst, chunk []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(chunk)))
	if len(chunk) == 0 {
		return dst
	}
	// The tag holds length-1: below 60 in its top six bits, else 60..63
	// there and the value in the next 1..4 bytes, little-endian.
	n := uint32(len(chunk) - 1)
	switch {
	case n < 60:
		dst = append(dst, byte(n)<<2)
	case n < 1<<8:
		dst = append(dst, 60<<2, byte(n))
	case n < 1<<16:
		dst = append(dst, 61<<2, byte(n), byte(n>>8))
	case n < 1<<24:
		dst = append(dst, 62<<2, byte(n), byte(n>>8), byte(n>>16))
	default:
		dst = append(dst, 63<<2, byte(n), byte(n>>8), byte(n>>16), byte(n>>24))
	}
	return append(dst, chunk...)
}

// SnappyStored reports whether the framed stream src is exactly one group
// of rawLen bytes in one snappy chunk made of a single literal, as
// AppendEncoded writes a chunk it cannot shrink, and if so returns the
// literal's bytes, a subslice of src. A reader then uses the bytes where
// they lie instead of decoding them into a copy. Any other stream, valid
// or not, returns false and is for Decompress.
func SnappyStored(src []byte, rawLen int) ([]byte, bool) {
	if rawLen <= 0 || len(src) < 8 || int64(binary.BigEndian.Uint32(src)) != int64(rawLen) ||
		int64(binary.BigEndian.Uint32(src[4:])) != int64(len(src)-8) {
		return nil, false
	}
	chunk := src[8:]
	u, p := binary.Uvarint(chunk)
	if p <= 0 || u != uint64(rawLen) || p >= len(chunk) {
		return nil, false
	}
	tag := chunk[p]
	p++
	if tag&3 != 0 {
		return nil, false // not a literal
	}
	n := uint64(tag >> 2)
	if extra := int(n) - 59; extra > 0 {
		if len(chunk)-p < extra {
			return nil, false
		}
		n = 0
		for i := extra - 1; i >= 0; i-- {
			n = n<<8 | uint64(chunk[p+i])
		}
		p += extra
	}
	if n+1 != u || uint64(len(chunk)-p) != u {
		return nil, false
	}
	return chunk[p:len(chunk):len(chunk)], true
}

// AppendDecoded appends the decoding of the snappy block chunk to dst. The
// block's header gives its decoded length, which is checked against max
// and against maxSnappyRatio before dst grows by exactly that much.
func (Snappy) AppendDecoded(dst, chunk []byte, max int) ([]byte, error) {
	n, err := snappy.DecodedLen(chunk)
	if err != nil {
		return dst, errors.Wrapf(err, "snappy block of %d bytes", len(chunk))
	}
	if n > max {
		return dst, errors.Newf("snappy block decodes to %d bytes, only %d left", n, max)
	}
	if n > maxSnappyRatio*len(chunk) {
		return dst, errors.Newf("snappy block of %d bytes claims to decode to %d", len(chunk), n)
	}
	at := len(dst)
	dst = slices.Grow(dst, n)[:at+n]
	// With room for n bytes, Decode writes into dst rather than allocating.
	if _, err := snappy.Decode(dst[at:], chunk); err != nil {
		return dst[:at], errors.Wrapf(err, "snappy block of %d bytes", len(chunk))
	}
	return dst, nil
}
