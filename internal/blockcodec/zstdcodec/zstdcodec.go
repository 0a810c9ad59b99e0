// Package zstdcodec is HBase's ZstdCodec
// (org.apache.hadoop.hbase.io.compress.zstd.ZstdCodec) as a
// blockcodec.Codec: each chunk of the Hadoop framing is one complete zstd
// frame. It is apart from blockcodec so that what imports only the framing
// and snappy (ipc, and through it the client) does not link
// klauspost/compress/zstd.
//
// Hadoop's own ZStandardCodec writes a bare zstd stream instead of the
// framing. AppendDecoded reads any sequence of zstd frames, so it also
// reads such a stream whole; telling the two apart is the caller's business
// (hfile does it by the frame magic).
//
// Codec is safe for concurrent use. It shares one encoder and one decoder
// per process, built on first use: EncodeAll and DecodeAll are safe for
// concurrent use and keep their own per-call state, so a block does not pay
// for a new codec.
package zstdcodec

import (
	"runtime"
	"slices"
	"sync"

	"github.com/cockroachdb/errors"
	"github.com/klauspost/compress/zstd"
	"github.com/regionkv/regionkv/internal/blockcodec"
)

// Codec is HBase's ZstdCodec.
type Codec struct{}

var _ blockcodec.Codec = Codec{}

// bufferSize is ZstdCodec's default buffer (hbase.io.compress.zstd.buffersize).
const bufferSize = 256 << 10

// maxChunk is the most raw bytes ZstdCodec compresses as one chunk: the
// buffer less ZSTD_compressBound(bufferSize) - bufferSize, which is
// bufferSize/256 for a 256 KiB buffer, so 261120 bytes.
const maxChunk = bufferSize - bufferSize>>8

// Limits of the shared decoder. Output is bounded per call by the capacity
// of the destination (WithDecodeAllCapLimit); these only stop a frame
// header from asking for an absurd window or size before that check
// applies.
const (
	maxWindow  = 128 << 20
	maxDecoded = 1 << 30
)

// encoder is shared. SpeedDefault is zstd level 3, HBase's default
// hbase.io.compress.zstd.level.
var encoder = sync.OnceValue(func() *zstd.Encoder {
	enc, err := zstd.NewWriter(nil,
		zstd.WithEncoderLevel(zstd.SpeedDefault),
		zstd.WithEncoderConcurrency(runtime.GOMAXPROCS(0)))
	if err != nil {
		// NewWriter fails only for invalid options, and these are constant.
		panic(errors.AssertionFailedf("zstdcodec: building the encoder: %v", err))
	}
	return enc
})

// decoder is shared too; used only through DecodeAll, it starts no
// goroutines. It is built apart from the encoder, so that a reader that
// never compresses does not pay for GOMAXPROCS encoders' tables.
var decoder = sync.OnceValues(func() (*zstd.Decoder, error) {
	return zstd.NewReader(nil,
		zstd.WithDecoderConcurrency(0),
		zstd.WithDecodeAllCapLimit(true),
		zstd.WithDecoderMaxWindow(maxWindow),
		zstd.WithDecoderMaxMemory(maxDecoded))
})

// MaxChunk returns 261120, ZstdCodec's chunk size for its default buffer.
func (Codec) MaxChunk() int { return maxChunk }

// AppendEncoded appends one zstd frame holding chunk to dst.
func (Codec) AppendEncoded(dst, chunk []byte) []byte {
	return encoder().EncodeAll(chunk, dst)
}

// AppendDecoded appends the decoding of chunk, one or more zstd frames, to
// dst. It makes room for max bytes first, since frames need not say how
// much they hold, so max is what bounds its memory: hfile passes a block's
// size, which it allocates anyway. Decoding fails rather than grow past that
// room, after at most one zstd block (128 KiB) of overshoot inside the
// decoder.
func (Codec) AppendDecoded(dst, chunk []byte, max int) ([]byte, error) {
	dec, err := decoder()
	if err != nil {
		return dst, errors.Wrap(err, "zstd: building the decoder")
	}
	at := len(dst)
	room := slices.Grow(dst, max)[:at+max]
	// The capacity of what DecodeAll is given bounds its output.
	res, err := dec.DecodeAll(chunk, room[at:at:at+max])
	if err != nil {
		return dst, errors.Wrapf(err, "zstd chunk of %d bytes", len(chunk))
	}
	if len(res) > max {
		return dst, errors.Newf("zstd chunk decodes to more than %d bytes", max)
	}
	if len(res) > 0 && &res[0] != &room[at] {
		copy(room[at:], res)
	}
	return room[:at+len(res)], nil
}
