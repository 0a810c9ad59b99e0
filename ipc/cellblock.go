package ipc

import (
	"encoding/binary"

	"github.com/cockroachdb/errors"
	"github.com/golang/snappy"
)

// Codec says how a connection's cellblocks are written: whether cellblocks
// are used at all (a connection header without a codec class gets every
// cell inline in protobuf), with tags, and with snappy compression.
type Codec struct {
	Enabled  bool
	WithTags bool
	Snappy   bool
}

// CodecFor returns the codec a connection header asks for, or an error for
// a codec or compressor we do not have.
func CodecFor(codecClass, compressorClass string) (Codec, error) {
	var c Codec
	switch codecClass {
	case "":
	case KeyValueCodecClass:
		c.Enabled = true
	case KeyValueCodecWithTagsClass:
		c.Enabled, c.WithTags = true, true
	default:
		return c, errors.Newf("ipc: unsupported cellblock codec %q (have %s)", codecClass, KeyValueCodecClass)
	}
	switch compressorClass {
	case "":
	case SnappyCodecClass:
		c.Snappy = c.Enabled
	default:
		return c, errors.Newf("ipc: unsupported cellblock compressor %q (have %s)", compressorClass, SnappyCodecClass)
	}
	return c, nil
}

// snappyChunk is the most input Hadoop's SnappyCodec compresses as one
// chunk (its default buffer, 256 KiB, less the codec's overhead allowance).
const snappyChunk = 256<<10 - (256<<10)/6 - 32

// maxSnappyRatio bounds a snappy chunk's decoded size by its encoded size:
// the best op, a 2-byte-offset copy, turns 3 bytes into 64.
const maxSnappyRatio = 22

// Compress returns b compressed as the codec says (b itself if not).
// Snappy output is Hadoop's BlockCompressorStream framing, as HBase's
// CellBlockBuilder writes through SnappyCodec: per block, the raw length,
// then length-prefixed compressed chunks.
func (c Codec) Compress(dst, b []byte) []byte {
	if !c.Snappy || len(b) == 0 {
		return append(dst, b...)
	}
	for len(b) > 0 {
		n := min(len(b), snappyChunk)
		dst = binary.BigEndian.AppendUint32(dst, uint32(n))
		start := len(dst)
		dst = append(dst, 0, 0, 0, 0)
		dst = append(dst, make([]byte, snappy.MaxEncodedLen(n))...)
		enc := snappy.Encode(dst[start+4:], b[:n])
		binary.BigEndian.PutUint32(dst[start:], uint32(len(enc)))
		dst = dst[:start+4+len(enc)]
		b = b[n:]
	}
	return dst
}

// Decompress undoes Compress. max bounds the decompressed size, so a hostile
// length cannot make us allocate without bound.
func (c Codec) Decompress(dst, b []byte, max int) ([]byte, error) {
	if !c.Snappy || len(b) == 0 {
		return append(dst, b...), nil
	}
	for len(b) > 0 {
		if len(b) < 4 {
			return nil, errors.New("ipc: truncated snappy cellblock")
		}
		raw := int(binary.BigEndian.Uint32(b))
		b = b[4:]
		if raw < 0 || len(dst)+raw > max {
			return nil, errors.Newf("ipc: snappy cellblock of %d bytes exceeds the limit of %d", raw, max)
		}
		for got := 0; got < raw; {
			if len(b) < 4 {
				return nil, errors.New("ipc: truncated snappy cellblock chunk")
			}
			n := int(binary.BigEndian.Uint32(b))
			b = b[4:]
			if n < 0 || n > len(b) {
				return nil, errors.Newf("ipc: snappy chunk of %d bytes overruns the cellblock (%d left)", n, len(b))
			}
			dl, err := snappy.DecodedLen(b[:n])
			// No snappy op yields more than 64 bytes from 3, so a chunk
			// claiming more is corrupt: reject it before allocating.
			if err != nil || dl > raw-got || dl > maxSnappyRatio*n {
				return nil, errors.Newf("ipc: corrupt snappy chunk (%d bytes decoded into a block of %d)", dl, raw)
			}
			start := len(dst)
			dst = append(dst, make([]byte, dl)...)
			if _, err := snappy.Decode(dst[start:], b[:n]); err != nil {
				return nil, errors.Wrap(err, "ipc: corrupt snappy chunk")
			}
			got += dl
			b = b[n:]
			if dl == 0 && n == 0 {
				return nil, errors.New("ipc: empty snappy chunk")
			}
		}
	}
	return dst, nil
}
