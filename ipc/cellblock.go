package ipc

import (
	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/internal/blockcodec"
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

// Compress returns b compressed as the codec says (b itself if not).
// Snappy output is Hadoop's BlockCompressorStream framing, as HBase's
// CellBlockBuilder writes through SnappyCodec: a group per chunk, each its
// raw length and one length-prefixed compressed chunk.
func (c Codec) Compress(dst, b []byte) []byte {
	if !c.Snappy {
		return append(dst, b...)
	}
	return blockcodec.CompressPerChunk(dst, b, blockcodec.Snappy{})
}

// Decompress undoes Compress, and reads any framing Hadoop writes. max
// bounds len(dst) after decompression, so a hostile length cannot make us
// allocate without bound.
func (c Codec) Decompress(dst, b []byte, max int) ([]byte, error) {
	if !c.Snappy || len(b) == 0 {
		return append(dst, b...), nil
	}
	out, err := blockcodec.Decompress(dst, b, max-len(dst), blockcodec.Snappy{})
	if err != nil {
		return nil, errors.Wrapf(err, "ipc: snappy cellblock of %d bytes", len(b))
	}
	return out, nil
}
