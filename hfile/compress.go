package hfile

import (
	"bytes"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/cockroachdb/errors"
	"github.com/klauspost/compress/gzip"
	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/internal/blockcodec"
	"github.com/regionkv/regionkv/internal/blockcodec/zstdcodec"
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
// writers and readers here, the zstd encoder and decoder in
// internal/blockcodec/zstdcodec) is pooled or shared, so a block does not
// pay for a new codec. GZ uses klauspost/compress/gzip rather than
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
//   - SNAPPY: Hadoop's BlockCompressorStream framing around raw snappy
//     blocks, one group per block (see internal/blockcodec, which draws the
//     framing).
//   - ZSTD: the same framing around complete zstd frames, as HBase's
//     org.apache.hadoop.hbase.io.compress.zstd.ZstdCodec writes. Hadoop's
//     ZStandardCodec (HBase's default ZSTD codec class) writes a bare zstd
//     stream instead; Decompress tells the two apart by the zstd frame magic
//     and reads both. An HBase that should read our ZSTD files needs
//     hbase.io.compress.zstd.codec set to HBase's ZstdCodec.
//
// Reading the framing, a rawLen of 0 ends the stream and what follows it is
// ignored, as Hadoop ignores it; since a block's size is known, any other
// bytes after the block's last are corruption.
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
		return blockcodec.Compress(dst, src, blockcodec.Snappy{})
	case CompressionZstd:
		return blockcodec.Compress(dst, src, zstdcodec.Codec{})
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
	// Room for exactly the block: the codecs decode into it and are refused
	// rather than grow it.
	dst = slices.Grow(dst, uncompressedSize)
	var err error
	switch c {
	case CompressionGZ:
		dst = dst[:n+uncompressedSize]
		err = gzipDecompress(dst[n:], src)
	case CompressionSnappy:
		dst, err = blockcodec.Decompress(dst, src, uncompressedSize, blockcodec.Snappy{})
	case CompressionZstd:
		if bytes.HasPrefix(src, zstdMagic) {
			// Hadoop's ZStandardCodec: a bare stream of one or more frames.
			dst, err = zstdcodec.Codec{}.AppendDecoded(dst, src, uncompressedSize)
		} else {
			dst, err = blockcodec.Decompress(dst, src, uncompressedSize, zstdcodec.Codec{})
		}
	}
	if got := len(dst) - n; err == nil && got != uncompressedSize {
		err = errors.Newf("stream decodes to %d bytes, want %d", got, uncompressedSize)
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

// zstdMagic starts every zstd frame (RFC 8878, little-endian 0xFD2FB528). A
// framed payload starts with a big-endian rawLen instead, which would have to
// be 0x28B52FFD (683 MB) to collide.
var zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}
