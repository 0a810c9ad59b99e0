package ipc

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/golang/snappy"
	"github.com/regionkv/regionkv/internal/blockcodec"
)

func TestCodecFor(t *testing.T) {
	tests := []struct {
		codec, compressor string
		want              Codec
		wantErr           bool
	}{
		{"", "", Codec{}, false},
		{KeyValueCodecClass, "", Codec{Enabled: true}, false},
		{KeyValueCodecWithTagsClass, "", Codec{Enabled: true, WithTags: true}, false},
		{KeyValueCodecClass, SnappyCodecClass, Codec{Enabled: true, Snappy: true}, false},
		{KeyValueCodecWithTagsClass, SnappyCodecClass, Codec{Enabled: true, WithTags: true, Snappy: true}, false},
		// A compressor without a codec: no cellblocks, so nothing to compress.
		{"", SnappyCodecClass, Codec{}, false},
		{"org.apache.hadoop.hbase.codec.CellCodec", "", Codec{}, true},
		{KeyValueCodecClass, "org.apache.hadoop.io.compress.GzipCodec", Codec{}, true},
		{KeyValueCodecClass, "org.apache.hadoop.io.compress.Lz4Codec", Codec{}, true},
	}
	for _, tc := range tests {
		got, err := CodecFor(tc.codec, tc.compressor)
		if (err != nil) != tc.wantErr {
			t.Errorf("CodecFor(%q, %q) error %v, want error %v", tc.codec, tc.compressor, err, tc.wantErr)
			continue
		}
		if err == nil && got != tc.want {
			t.Errorf("CodecFor(%q, %q) = %+v, want %+v", tc.codec, tc.compressor, got, tc.want)
		}
	}
}

var snappyCodec = Codec{Enabled: true, Snappy: true}

// snappyChunk is the raw bytes per group and chunk of the cellblocks
// Compress writes.
const snappyChunk = blockcodec.SnappyMaxChunk

func TestSnappyChunkSize(t *testing.T) {
	// Hadoop's BlockCompressorStream for SnappyCodec with the default 256 KiB
	// buffer: MAX_INPUT_SIZE = bufferSize - (bufferSize/6 + 32).
	if snappyChunk != 218422 {
		t.Fatalf("snappyChunk = %d, want 218422 (~213.3 KiB)", snappyChunk)
	}
}

// testPayload returns n bytes that compress somewhat (cell-like, with
// random values) from a fixed seed.
func testPayload(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed))
	b := make([]byte, 0, n)
	for len(b) < n {
		b = append(b, "row-000123/cf:qualifier/"...)
		for range 16 {
			b = append(b, byte(r.IntN(256)))
		}
	}
	return b[:n]
}

func TestSnappyRoundTrip(t *testing.T) {
	sizes := []int{0, 1, 17, 4 << 10, snappyChunk - 1, snappyChunk, snappyChunk + 1, 3*snappyChunk + 5, 5 << 20}
	for _, n := range sizes {
		for _, kind := range []string{"cells", "zeros", "random"} {
			var in []byte
			switch kind {
			case "cells":
				in = testPayload(n, uint64(n))
			case "zeros":
				// Snappy's best ratio: must not trip the decoded-size bound.
				in = make([]byte, n)
			case "random":
				in = make([]byte, n)
				cc := rand.NewChaCha8([32]byte{byte(n), byte(n >> 8), byte(n >> 16)})
				cc.Read(in)
			}
			comp := snappyCodec.Compress(nil, in)
			if n == 0 && len(comp) != 0 {
				t.Fatalf("empty input compressed to %x", comp)
			}
			blocks := checkHadoopFraming(t, comp, in)
			if want := (n + snappyChunk - 1) / snappyChunk; blocks != want {
				t.Errorf("%s %d: %d blocks, want %d", kind, n, blocks, want)
			}
			out, err := snappyCodec.Decompress(nil, comp, n)
			if err != nil {
				t.Fatalf("%s %d: Decompress: %v", kind, n, err)
			}
			if !bytes.Equal(out, in) {
				t.Fatalf("%s %d: round trip differs", kind, n)
			}
			// One byte less of room is refused.
			if n > 0 {
				if _, err := snappyCodec.Decompress(nil, comp, n-1); err == nil {
					t.Fatalf("%s %d: decompressed over the limit", kind, n)
				}
			}
			// dst is appended to.
			out, err = snappyCodec.Decompress([]byte("prefix"), comp, n+6)
			if err != nil || string(out[:6]) != "prefix" || !bytes.Equal(out[6:], in) {
				t.Fatalf("%s %d: Decompress with a prefix: %v", kind, n, err)
			}
		}
	}
}

// checkHadoopFraming walks b as BlockCompressorStream output, checks that
// each block is u32 raw length, u32 compressed length and the snappy chunk
// of the next raw-length bytes of want, and returns the number of blocks.
func checkHadoopFraming(t *testing.T, b, want []byte) int {
	t.Helper()
	blocks := 0
	for len(b) > 0 {
		if len(b) < 8 {
			t.Fatalf("block %d: %d bytes left", blocks, len(b))
		}
		raw := int(binary.BigEndian.Uint32(b))
		clen := int(binary.BigEndian.Uint32(b[4:]))
		if raw == 0 || raw > snappyChunk || raw > len(want) || clen > len(b)-8 {
			t.Fatalf("block %d: raw %d, compressed %d, %d bytes left", blocks, raw, clen, len(b)-8)
		}
		dec, err := snappy.Decode(nil, b[8:8+clen])
		if err != nil || !bytes.Equal(dec, want[:raw]) {
			t.Fatalf("block %d: chunk does not decode to the block's bytes: %v", blocks, err)
		}
		b, want = b[8+clen:], want[raw:]
		blocks++
	}
	if len(want) != 0 {
		t.Fatalf("%d bytes not covered by blocks", len(want))
	}
	return blocks
}

func TestSnappyGoldenSmall(t *testing.T) {
	in := []byte("hello, hello, hello, hello")
	comp := snappyCodec.Compress(nil, in)
	enc := snappy.Encode(nil, in)
	want := binary.BigEndian.AppendUint32(nil, uint32(len(in)))
	want = binary.BigEndian.AppendUint32(want, uint32(len(enc)))
	want = append(want, enc...)
	assertBytes(t, "snappy cellblock", comp, want)

	// Without snappy the codec copies.
	for _, c := range []Codec{{}, {Enabled: true}, {Enabled: true, WithTags: true}} {
		assertBytes(t, "no compression", c.Compress([]byte("x"), in), append([]byte("x"), in...))
		out, err := c.Decompress([]byte("x"), in, 1)
		if err != nil {
			t.Fatal(err)
		}
		assertBytes(t, "no decompression", out, append([]byte("x"), in...))
	}
}

// TestSnappyHadoopMultiChunkBlock decodes what BlockCompressorStream writes
// for one write() larger than its buffer: one raw length for the whole
// write, then several compressed chunks.
func TestSnappyHadoopMultiChunkBlock(t *testing.T) {
	in := testPayload(2*snappyChunk+1000, 7)
	b := binary.BigEndian.AppendUint32(nil, uint32(len(in)))
	for rest := in; len(rest) > 0; {
		n := min(len(rest), snappyChunk)
		enc := snappy.Encode(nil, rest[:n])
		b = binary.BigEndian.AppendUint32(b, uint32(len(enc)))
		b = append(b, enc...)
		rest = rest[n:]
	}
	// Followed by an ordinary small block.
	tail := []byte("tail of the cellblock")
	b = append(b, snappyCodec.Compress(nil, tail)...)
	out, err := snappyCodec.Decompress(nil, b, len(in)+len(tail))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, append(append([]byte{}, in...), tail...)) {
		t.Fatal("multi-chunk block decoded wrong")
	}
}

func snappyBlock(raw uint32, chunks ...[]byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, raw)
	for _, c := range chunks {
		b = binary.BigEndian.AppendUint32(b, uint32(len(c)))
		b = append(b, c...)
	}
	return b
}

func TestSnappyDecompressRejects(t *testing.T) {
	small := []byte("0123456789012345678901234567890123456789")
	enc := snappy.Encode(nil, small)
	valid := snappyCodec.Compress(nil, small)
	// A snappy chunk that claims to decode to 100 MB (varint) but is 4 bytes.
	liar := append(binary.AppendUvarint(nil, 100<<20), 0)
	tests := []struct {
		name string
		in   []byte
		max  int
	}{
		{"short raw length", []byte{0, 0, 1}, 1 << 20},
		{"raw length only", valid[:4], 1 << 20},
		{"short chunk length", valid[:6], 1 << 20},
		{"chunk length overruns", snappyBlock(uint32(len(small)), append(enc, 0))[:len(valid)], 1 << 20},
		{"chunk length huge", append(binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, 40), 0xffffffff), enc...), 1 << 20},
		{"truncated chunk", valid[:len(valid)-1], 1 << 20},
		{"raw above max", snappyBlock(1<<30, enc), 1 << 20},
		{"raw 4 GiB", snappyBlock(0xffffffff, enc), DefaultMaxRequestSize},
		{"raw just above max", valid, len(small) - 1},
		{"chunk decodes past raw", snappyBlock(uint32(len(small)-1), enc), 1 << 20},
		{"chunks fall short of raw", snappyBlock(uint32(len(small)+1), enc), 1 << 20},
		{"zero-length chunk", snappyBlock(10, nil), 1 << 20},
		{"corrupt chunk", snappyBlock(uint32(len(small)), append([]byte{byte(len(small))}, 0xff, 0xff, 0xff, 0xff)), 1 << 20},
		{"lying chunk", snappyBlock(100<<20, liar), DefaultMaxRequestSize},
		{"second block over max", append(append([]byte{}, valid...), valid...), len(small) + 1},
		{"garbage after block", append(append([]byte{}, valid...), 1, 2), 1 << 20},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out []byte
			var err error
			n := allocatedBy(func() { out, err = snappyCodec.Decompress(nil, tc.in, tc.max) })
			if err == nil {
				t.Fatalf("Decompress(%x) = %d bytes, want an error", tc.in, len(out))
			}
			if n > 1<<20 {
				t.Fatalf("rejecting %x allocated %d bytes", tc.in, n)
			}
		})
	}

	// Every proper prefix of a one-block cellblock is refused.
	for i := 1; i < len(valid); i++ {
		if out, err := snappyCodec.Decompress(nil, valid[:i], 1<<20); err == nil {
			t.Fatalf("prefix of %d/%d bytes accepted as %q", i, len(valid), out)
		}
	}
}

func TestSnappyDecompressOddButValid(t *testing.T) {
	// An empty block (raw length 0) decodes to nothing.
	out, err := snappyCodec.Decompress(nil, []byte{0, 0, 0, 0}, 0)
	if err != nil || len(out) != 0 {
		t.Fatalf("empty block: %q, %v", out, err)
	}
	// A block of two chunks, one of which encodes zero bytes.
	in := []byte("abcdefgh")
	b := snappyBlock(uint32(len(in)), snappy.Encode(nil, nil), snappy.Encode(nil, in[:3]), snappy.Encode(nil, in[3:]))
	out, err = snappyCodec.Decompress(nil, b, len(in))
	if err != nil || !bytes.Equal(out, in) {
		t.Fatalf("chunked block: %q, %v", out, err)
	}
}
