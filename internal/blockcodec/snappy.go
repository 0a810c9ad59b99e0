package blockcodec

import (
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

// AppendEncoded appends the snappy block of chunk to dst.
func (Snappy) AppendEncoded(dst, chunk []byte) []byte {
	at := len(dst)
	dst = slices.Grow(dst, snappy.MaxEncodedLen(len(chunk)))
	// With that much room, Encode writes into dst rather than allocating.
	enc := snappy.Encode(dst[at:cap(dst)], chunk)
	return dst[:at+len(enc)]
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
