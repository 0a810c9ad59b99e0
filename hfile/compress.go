package hfile

import (
	"bytes"
	"encoding/binary"
	"io"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/cockroachdb/errors"
	"github.com/golang/snappy"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/regionkv/regionkv/encoding"
)

// Compression is HBase's Compression.Algorithm: the codec applied to every
// block payload of a file (never to the 33-byte block header). The zero value
// is NONE. The trailer's compression_codec field stores HBase's ordinal of the
// algorithm instead (where 0 is LZO): Ordinal and CompressionOfOrdinal convert.
//
// Only NONE, GZ, SNAPPY and ZSTD are implemented; the others parse and print
// but Compress and Decompress return ErrUnsupportedCompression for them.
//
// Compress and Decompress are safe for concurrent use. Codec state (gzip
// writers and readers, the zstd encoder and decoder) is pooled, so a block
// does not pay for a new codec. GZ uses klauspost/compress/gzip rather than
// the standard library's: same format, about four times faster to compress,
// and its inflater does not allocate per block.
//
// # Framing
//
// Each algorithm writes what the HBase codec configured by default (or, for
// ZSTD, HBase's own codec) writes, so HBase can read our blocks:
//
//   - GZ: one complete RFC 1952 gzip member per block, with the header the JDK
//     writes (OS byte 0).
//   - SNAPPY: Hadoop's BlockCompressorStream framing (below) around raw snappy
//     blocks.
//   - ZSTD: the same framing around complete zstd frames, as HBase's
//     org.apache.hadoop.hbase.io.compress.zstd.ZstdCodec writes. Hadoop's
//     ZStandardCodec (HBase's default ZSTD codec class) writes a bare zstd
//     stream instead; Decompress tells the two apart by the zstd frame magic
//     and reads both. An HBase that should read our ZSTD files needs
//     hbase.io.compress.zstd.codec set to HBase's ZstdCodec.
//
// The block framing, all integers big-endian:
//
//	+--------------+---------------+-------+---------------+-------+-----+--------------+-----
//	| rawLen int32 | compLen int32 | chunk | compLen int32 | chunk | ... | rawLen int32 | ...
//	+--------------+---------------+-------+---------------+-------+-----+--------------+-----
//
// A rawLen counts the uncompressed bytes of the {compLen, chunk} pairs that
// follow it, so a reader may meet several rawLen groups and several chunks
// per group; a rawLen of 0 marks the end of the stream.
type Compression uint32

// The algorithms. Their values are HBase's ordinals but for NONE and LZO,
// swapped so that the zero value is NONE.
const (
	CompressionNone   Compression = 0
	CompressionGZ     Compression = 1
	CompressionLZO    Compression = 2
	CompressionSnappy Compression = 3
	CompressionLZ4    Compression = 4
	CompressionBzip2  Compression = 5
	CompressionZstd   Compression = 6
	CompressionLZMA   Compression = 7
	CompressionBrotli Compression = 8
)

// compressionNames are HBase's configuration names, indexed by value.
var compressionNames = [...]string{"none", "gz", "lzo", "snappy", "lz4", "bzip2", "zstd", "lzma", "brotli"}

// Ordinal returns HBase's Compression.Algorithm ordinal of c, as the trailer
// stores it.
func (c Compression) Ordinal() uint32 {
	switch c {
	case CompressionNone:
		return 2
	case CompressionLZO:
		return 0
	}
	return uint32(c)
}

// CompressionOfOrdinal returns the Compression whose HBase ordinal is o.
func CompressionOfOrdinal(o uint32) Compression {
	switch o {
	case 2:
		return CompressionNone
	case 0:
		return CompressionLZO
	}
	return Compression(o)
}

// ErrUnsupportedCompression is returned (wrapped) when a file or a caller asks
// for an algorithm this package does not implement. It is not corruption: the
// bytes may be perfectly valid for HBase.
var ErrUnsupportedCompression = errors.New("hfile: unsupported compression")

// String returns HBase's lower-case configuration name ("gz", "snappy", ...).
func (c Compression) String() string {
	if int(c) < len(compressionNames) {
		return compressionNames[c]
	}
	return "unknown(" + strconv.FormatUint(uint64(c), 10) + ")"
}

// ParseCompression maps an HBase compression name to a Compression. Case is
// ignored: HBase's configuration uses "gz"/"snappy", its shell and
// descriptors use the enum names "GZ"/"SNAPPY". Names of algorithms this
// package cannot run still parse; Supported tells them apart.
func ParseCompression(name string) (Compression, error) {
	for i, n := range compressionNames {
		if strings.EqualFold(name, n) {
			return Compression(i), nil
		}
	}
	return 0, errors.Newf("hfile: unknown compression %q", name)
}

// Supported returns nil if Compress and Decompress implement c, and an error
// marked ErrUnsupportedCompression otherwise.
func (c Compression) Supported() error {
	switch c {
	case CompressionNone, CompressionGZ, CompressionSnappy, CompressionZstd:
		return nil
	}
	return errors.Mark(errors.Newf("hfile: compression %s is not supported", errors.Safe(c.String())), ErrUnsupportedCompression)
}

// Compress appends the compressed form of src to dst and returns the result.
// src is not retained.
func (c Compression) Compress(dst, src []byte) ([]byte, error) {
	if len(src) > math.MaxInt32 {
		return dst, errors.Newf("hfile: cannot compress a %d-byte block", len(src))
	}
	switch c {
	case CompressionNone:
		return append(dst, src...), nil
	case CompressionGZ:
		return gzipCompress(dst, src)
	case CompressionSnappy:
		return blockCompress(dst, src, snappyMaxChunk, snappyEncodeChunk)
	case CompressionZstd:
		enc, err := zstdEncoder()
		if err != nil {
			return dst, err
		}
		return blockCompress(dst, src, zstdMaxChunk, func(dst, chunk []byte) ([]byte, error) {
			return enc.EncodeAll(chunk, dst), nil
		})
	}
	return dst, c.Supported()
}

// Decompress appends the decompression of src to dst and returns the result.
// The result holds exactly uncompressedSize more bytes than dst, or an error
// marked encoding.ErrCorruption is returned: a stream that decodes to fewer or
// more bytes is as corrupt as one that does not decode.
//
// Output is bounded by uncompressedSize: dst grows by exactly that much, and
// decoding stops as soon as the stream would exceed it, so a small garbage
// payload cannot make Decompress allocate more (a zstd block may overshoot by
// at most one 128 KiB block before being rejected). The caller should bound
// uncompressedSize itself, since it comes from the block header.
func (c Compression) Decompress(dst, src []byte, uncompressedSize int) ([]byte, error) {
	if uncompressedSize < 0 {
		return dst, encoding.CorruptionErrorf("hfile: negative uncompressed size %d", uncompressedSize)
	}
	if err := c.Supported(); err != nil {
		return dst, err
	}
	if c == CompressionNone {
		if len(src) != uncompressedSize {
			return dst, encoding.CorruptionErrorf("hfile: uncompressed payload is %d bytes, header says %d", len(src), uncompressedSize)
		}
		return append(dst, src...), nil
	}
	n := len(dst)
	dst = slices.Grow(dst, uncompressedSize)[:n+uncompressedSize]
	out := dst[n:]
	var err error
	switch c {
	case CompressionGZ:
		err = gzipDecompress(out, src)
	case CompressionSnappy:
		err = blockDecompress(out, src, snappyDecodeChunk)
	case CompressionZstd:
		err = zstdDecompress(out, src)
	}
	if err != nil {
		return dst[:n], encoding.MarkCorruption(errors.Wrapf(err, "hfile: %s payload of %d bytes (%d uncompressed)",
			errors.Safe(c.String()), len(src), uncompressedSize))
	}
	return dst, nil
}

// GZ.

// jdkGzipOS is the OS byte of the gzip header java.util.zip.GZIPOutputStream
// writes (Go's default is 255, "unknown"). Matching it keeps our gzip headers
// byte-identical to HBase's.
const jdkGzipOS = 0

// emptyGzipMember is what the JDK writes for an empty block (HBase runs even
// empty payloads, like an empty meta index, through the codec): the header,
// the two-byte empty final deflate block, CRC32 0 and ISIZE 0. Writing these
// bytes rather than whatever our deflater emits for nothing makes empty
// blocks identical to HBase's.
var emptyGzipMember = []byte{
	0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, jdkGzipOS,
	0x03, 0x00,
	0, 0, 0, 0, 0, 0, 0, 0,
}

// appendWriter is an io.Writer that appends to a slice, so the gzip writer
// can compress straight into the caller's dst.
type appendWriter struct{ b []byte }

func (w *appendWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

type gzipCompressor struct {
	out appendWriter
	w   *gzip.Writer
}

var gzipCompressors = sync.Pool{New: func() any {
	c := &gzipCompressor{}
	c.w = gzip.NewWriter(&c.out)
	return c
}}

func gzipCompress(dst, src []byte) ([]byte, error) {
	if len(src) == 0 {
		return append(dst, emptyGzipMember...), nil
	}
	c := gzipCompressors.Get().(*gzipCompressor)
	defer gzipCompressors.Put(c)
	c.out.b = dst
	c.w.Reset(&c.out) // Reset also resets the header, so set OS after it.
	c.w.OS = jdkGzipOS
	_, err := c.w.Write(src)
	if err == nil {
		err = c.w.Close()
	}
	dst, c.out.b = c.out.b, nil
	return dst, err
}

type gzipDecompressor struct {
	src bytes.Reader
	r   gzip.Reader
	one [1]byte
}

var gzipDecompressors = sync.Pool{New: func() any { return new(gzipDecompressor) }}

// gzipDecompress fills out exactly. The gzip reader checks the member's CRC32
// and ISIZE only when it reaches the end, so after filling out it reads once
// more and requires a clean EOF; that also rejects streams that are longer
// than the header claims. Concatenated members are accepted, as the JDK's
// GZIPInputStream does; bytes after the last member are not.
func gzipDecompress(out, src []byte) error {
	d := gzipDecompressors.Get().(*gzipDecompressor)
	defer func() {
		d.src.Reset(nil)
		gzipDecompressors.Put(d)
	}()
	d.src.Reset(src)
	if err := d.r.Reset(&d.src); err != nil {
		return err
	}
	if _, err := io.ReadFull(&d.r, out); err != nil {
		return err
	}
	switch n, err := d.r.Read(d.one[:]); {
	case n > 0:
		return errors.New("stream is longer than the uncompressed size")
	case err != io.EOF:
		if err == nil {
			err = io.ErrNoProgress
		}
		return err
	}
	return nil
}

// Hadoop block framing (SNAPPY, HBase's ZSTD).

// hadoopCodecBufferSize is the default buffer of Hadoop's SnappyCodec
// (io.compression.codec.snappy.buffersize) and HBase's ZstdCodec
// (hbase.io.compress.zstd.buffersize).
const hadoopCodecBufferSize = 256 << 10

// BlockCompressorStream compresses at most bufferSize - overhead raw bytes
// per chunk, so that any chunk's compressed form fits the codec's buffer on
// the way back. We use the same limits so Hadoop's and HBase's decompressors,
// which size their buffers the same way, can read every chunk we write.
const (
	// SnappyCodec's overhead is bufferSize/6 + 32: 218422 raw bytes per chunk.
	snappyMaxChunk = hadoopCodecBufferSize - (hadoopCodecBufferSize/6 + 32)
	// ZstdCodec's overhead is ZSTD_compressBound(bufferSize) - bufferSize,
	// i.e. bufferSize/256 for a 256 KiB buffer: 261120 raw bytes per chunk.
	zstdMaxChunk = hadoopCodecBufferSize - hadoopCodecBufferSize>>8
)

// blockCompress writes src the way one BlockCompressorStream.write of the
// whole block followed by finish does: a single rawLen of len(src), then
// chunks of at most maxChunk raw bytes, each compressed on its own and
// preceded by its compressed length. An empty block is just rawLen 0.
func blockCompress(dst, src []byte, maxChunk int, encode func(dst, chunk []byte) ([]byte, error)) ([]byte, error) {
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(src)))
	for len(src) > 0 {
		chunk := src[:min(len(src), maxChunk)]
		src = src[len(chunk):]
		lenAt := len(dst)
		dst = append(dst, 0, 0, 0, 0)
		var err error
		if dst, err = encode(dst, chunk); err != nil {
			return dst, err
		}
		binary.BigEndian.PutUint32(dst[lenAt:], uint32(len(dst)-lenAt-4))
	}
	return dst, nil
}

// blockDecompress fills out from Hadoop-framed src. decode decompresses one
// chunk into the front of its dst (whose length is the room left in the
// current rawLen group) and returns how many bytes it produced.
//
// Hadoop's BlockDecompressorStream treats a rawLen of 0 as end of stream; we
// do the same, ignoring anything after it. Other bytes after the last group
// are rejected.
func blockDecompress(out, src []byte, decode func(dst, chunk []byte) (int, error)) error {
	pos := 0
	for pos < len(out) {
		if len(src) < 4 {
			return errors.Newf("truncated block framing at output offset %d", pos)
		}
		rawLen := int64(int32(binary.BigEndian.Uint32(src)))
		src = src[4:]
		if rawLen == 0 {
			break
		}
		if rawLen < 0 || rawLen > int64(len(out)-pos) {
			return errors.Newf("block framing raw length %d at output offset %d exceeds the %d bytes left", rawLen, pos, len(out)-pos)
		}
		end := pos + int(rawLen)
		for pos < end {
			if len(src) < 4 {
				return errors.Newf("truncated block framing at output offset %d", pos)
			}
			compLen := int64(int32(binary.BigEndian.Uint32(src)))
			src = src[4:]
			if compLen < 0 || compLen > int64(len(src)) {
				return errors.Newf("chunk length %d at output offset %d exceeds the %d input bytes left", compLen, pos, len(src))
			}
			n, err := decode(out[pos:end], src[:compLen])
			if err != nil {
				return errors.Wrapf(err, "chunk at output offset %d", pos)
			}
			pos += n
			src = src[compLen:]
		}
	}
	if pos != len(out) {
		return errors.Newf("stream ended after %d of %d bytes", pos, len(out))
	}
	if len(src) > 0 && !(len(src) >= 4 && binary.BigEndian.Uint32(src) == 0) {
		return errors.Newf("%d bytes after the end of the stream", len(src))
	}
	return nil
}

func snappyEncodeChunk(dst, chunk []byte) ([]byte, error) {
	n := len(dst)
	dst = slices.Grow(dst, snappy.MaxEncodedLen(len(chunk)))
	enc := snappy.Encode(dst[n:cap(dst)], chunk)
	return dst[:n+len(enc)], nil
}

func snappyDecodeChunk(dst, chunk []byte) (int, error) {
	n, err := snappy.DecodedLen(chunk)
	if err != nil {
		return 0, err
	}
	if n > len(dst) {
		return 0, errors.Newf("snappy chunk decodes to %d bytes, only %d left", n, len(dst))
	}
	// With len(dst) >= n, Decode writes into dst rather than allocating.
	if _, err := snappy.Decode(dst[:n], chunk); err != nil {
		return 0, err
	}
	return n, nil
}

// ZSTD.

// zstdMagic starts every zstd frame (RFC 8878, little-endian 0xFD2FB528). A
// framed payload starts with a big-endian rawLen instead, which would have to
// be 0x28B52FFD (683 MB) to collide.
var zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}

// Limits for the shared zstd decoder. Output is bounded per call by the cap
// of the destination (WithDecodeAllCapLimit); these only stop a frame header
// from asking for an absurd window or size before that check applies.
const (
	zstdMaxWindow  = 128 << 20
	zstdMaxDecoded = 1 << 30
)

// zstdEncoder is shared: EncodeAll is safe for concurrent use and keeps up to
// GOMAXPROCS internal encoders, so each block reuses one instead of building
// a new encoder. SpeedDefault is zstd level 3, HBase's default
// hbase.io.compress.zstd.level.
var zstdEncoder = sync.OnceValues(func() (*zstd.Encoder, error) {
	return zstd.NewWriter(nil,
		zstd.WithEncoderLevel(zstd.SpeedDefault),
		zstd.WithEncoderConcurrency(runtime.GOMAXPROCS(0)))
})

// zstdDecoder is shared the same way; used only through DecodeAll, it starts
// no goroutines.
var zstdDecoder = sync.OnceValues(func() (*zstd.Decoder, error) {
	return zstd.NewReader(nil,
		zstd.WithDecoderConcurrency(0),
		zstd.WithDecodeAllCapLimit(true),
		zstd.WithDecoderMaxWindow(zstdMaxWindow),
		zstd.WithDecoderMaxMemory(zstdMaxDecoded))
})

func zstdDecompress(out, src []byte) error {
	dec, err := zstdDecoder()
	if err != nil {
		return err
	}
	decode := func(dst, chunk []byte) (int, error) {
		// The cap of dst bounds the output: DecodeAll fails rather than
		// growing past it.
		res, err := dec.DecodeAll(chunk, dst[:0:len(dst)])
		if err != nil {
			return 0, err
		}
		if len(res) > len(dst) {
			return 0, errors.Newf("zstd chunk decodes to more than %d bytes", len(dst))
		}
		if len(res) > 0 && &res[0] != &dst[0] {
			copy(dst, res)
		}
		return len(res), nil
	}
	if bytes.HasPrefix(src, zstdMagic) {
		// Hadoop's ZStandardCodec: a bare stream of one or more frames.
		n, err := decode(out, src)
		if err != nil {
			return err
		}
		if n != len(out) {
			return errors.Newf("zstd stream decodes to %d bytes, want %d", n, len(out))
		}
		return nil
	}
	return blockDecompress(out, src, decode)
}
