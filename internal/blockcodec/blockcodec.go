// Package blockcodec is Hadoop's block compression framing, the format of
// BlockCompressorStream and BlockDecompressorStream, and the codecs whose
// chunks it carries. HBase writes it for SNAPPY (and, through its own
// ZstdCodec, ZSTD) blocks in HFiles and for compressed RPC cellblocks, so
// package hfile and package ipc both frame through here.
//
// # Usage
//
//	framed, err := blockcodec.Compress(dst, block, blockcodec.Snappy{})
//	block, err = blockcodec.Decompress(dst, framed, limit, blockcodec.Snappy{})
//
// Functions and codecs are safe for concurrent use.
//
// This package holds the framing and the snappy codec, all that ipc needs.
// The zstd codec is in the subpackage zstdcodec, so that importing the
// framing (ipc, and through it the client) does not link
// klauspost/compress/zstd. GZ is not framed this way; hfile keeps it.
//
// # Format
//
// This layout is Hadoop's and must not change. All integers are big-endian:
//
//	+--------------+---------------+-------+---------------+-------+-----+--------------+-----
//	| rawLen int32 | compLen int32 | chunk | compLen int32 | chunk | ... | rawLen int32 | ...
//	+--------------+---------------+-------+---------------+-------+-----+--------------+-----
//
// A group is a rawLen and the {compLen, chunk} pairs that follow it: rawLen
// counts the uncompressed bytes of the group's chunks, and each chunk is
// compressed on its own. A stream is any number of groups; a rawLen of 0
// marks its end. Writers cap the raw bytes of a chunk (Codec.MaxChunk) so
// that every chunk fits the buffer Hadoop's decompressor sizes for it.
package blockcodec

import (
	"encoding/binary"
	"math"

	"github.com/cockroachdb/errors"
)

// A Codec compresses and decompresses the chunks of the framing: what a
// Hadoop codec's Compressor and Decompressor do to one buffer.
type Codec interface {
	// MaxChunk is the most raw bytes a writer compresses as one chunk.
	MaxChunk() int
	// AppendEncoded appends the compressed form of chunk, at most MaxChunk
	// bytes, to dst.
	AppendEncoded(dst, chunk []byte) []byte
	// AppendDecoded appends the decompression of chunk to dst. It fails
	// rather than append more than max bytes, and grows dst by at most max
	// bytes, so that a hostile chunk costs no more memory than the room its
	// group has left. On error it returns dst with its original length.
	AppendDecoded(dst, chunk []byte, max int) ([]byte, error)
}

// Compress appends src to dst framed as one group: rawLen len(src), then
// chunks of at most c.MaxChunk() raw bytes. This is what
// BlockCompressorStream writes for one write of all of src followed by
// finish, and how HBase writes an HFile block; an empty src is the group 0,
// the end mark alone. It fails only if src is too long for an int32 rawLen.
func Compress(dst, src []byte, c Codec) ([]byte, error) {
	if len(src) > math.MaxInt32 {
		return dst, errors.Newf("blockcodec: cannot frame %d bytes in one group", len(src))
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(src)))
	return appendChunks(dst, src, c), nil
}

// CompressPerChunk appends src to dst framed as one group per chunk of at
// most c.MaxChunk() raw bytes. This is what BlockCompressorStream writes
// when the bytes reach it in writes smaller than its buffer, one group each
// time the buffer fills, as cells do when HBase streams a cellblock through
// the codec. An empty src appends nothing.
func CompressPerChunk(dst, src []byte, c Codec) []byte {
	for len(src) > 0 {
		n := min(len(src), c.MaxChunk())
		dst = binary.BigEndian.AppendUint32(dst, uint32(n))
		dst = appendChunks(dst, src[:n], c)
		src = src[n:]
	}
	return dst
}

// appendChunks appends the {compLen, chunk} pairs of one group.
func appendChunks(dst, src []byte, c Codec) []byte {
	maxChunk := c.MaxChunk()
	for len(src) > 0 {
		chunk := src[:min(len(src), maxChunk)]
		src = src[len(chunk):]
		at := len(dst)
		dst = c.AppendEncoded(append(dst, 0, 0, 0, 0), chunk)
		binary.BigEndian.PutUint32(dst[at:], uint32(len(dst)-at-4))
	}
	return dst
}

// Decompress appends to dst what the framed src decodes to, at most limit
// bytes, and returns the extended slice. On error it returns dst unchanged.
//
// It reads groups until src is used up or a rawLen is 0. Hadoop's
// BlockDecompressorStream takes a rawLen of 0 for the end of the stream and
// reads no further, so Decompress ignores whatever follows one. Each group
// must decode to exactly its rawLen. A stream cut short, a length that
// overruns src or would take the output past limit, and a chunk that does
// not decode or decodes past its group are errors, with the output offset
// at which they were found.
//
// limit bounds memory as well as output: a rawLen is checked against it
// before anything is decoded, and dst grows only as chunks decode (see
// Codec.AppendDecoded), so a small hostile src cannot make Decompress
// allocate more than limit. The decoded length is not checked against
// limit: a caller that knows the exact size (an HFile block header gives
// it) passes it as limit and compares the length of the result.
func Decompress(dst, src []byte, limit int, c Codec) ([]byte, error) {
	if limit < 0 {
		return dst, errors.Newf("blockcodec: negative limit %d", limit)
	}
	out, err := decompress(dst, src, limit, c)
	if err != nil {
		return dst, err
	}
	return out, nil
}

func decompress(dst, src []byte, limit int, c Codec) ([]byte, error) {
	start := len(dst)
	for len(src) > 0 {
		if len(src) < 4 {
			return dst, errors.Newf("blockcodec: %d bytes where a raw length should be, at output offset %d", len(src), len(dst)-start)
		}
		rawLen := int64(int32(binary.BigEndian.Uint32(src)))
		src = src[4:]
		if rawLen == 0 {
			break
		}
		if left := limit - (len(dst) - start); rawLen < 0 || rawLen > int64(left) {
			return dst, errors.Newf("blockcodec: raw length %d at output offset %d exceeds the %d bytes left of the limit",
				rawLen, len(dst)-start, left)
		}
		end := len(dst) + int(rawLen)
		for len(dst) < end {
			if len(src) < 4 {
				return dst, errors.Newf("blockcodec: stream ends inside a group, at output offset %d of its %d bytes",
					len(dst)-start, end-start)
			}
			compLen := int64(int32(binary.BigEndian.Uint32(src)))
			src = src[4:]
			if compLen < 0 || compLen > int64(len(src)) {
				return dst, errors.Newf("blockcodec: chunk length %d at output offset %d exceeds the %d input bytes left",
					compLen, len(dst)-start, len(src))
			}
			at := len(dst)
			var err error
			if dst, err = c.AppendDecoded(dst, src[:compLen], end-at); err != nil {
				return dst, errors.Wrapf(err, "blockcodec: chunk at output offset %d", at-start)
			}
			if len(dst) > end {
				return dst, errors.AssertionFailedf("blockcodec: %T appended %d bytes, %d allowed", c, len(dst)-at, end-at)
			}
			src = src[compLen:]
		}
	}
	return dst, nil
}
