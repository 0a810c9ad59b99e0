package blockcodec_test

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/regionkv/regionkv/internal/blockcodec"
)

// fuzzMaxLimit bounds the limit a fuzz input asks for: two snappy chunks'
// worth, enough for groups of several chunks.
const fuzzMaxLimit = 2 * blockcodec.SnappyMaxChunk

// fuzzCodecSlack is what a codec may allocate for itself in one call besides
// the output (errors with their stacks; the zstd decoder's one block of
// overshoot, grown by append). A bomb costs what it claims, far more.
const fuzzCodecSlack = 2 << 20

// FuzzDecompress decodes arbitrary input with every codec, framed
// (Decompress) or as one bare chunk (AppendDecoded, as hfile reads Hadoop's
// bare zstd streams). Nothing may panic; an error leaves dst alone; output
// stays within the limit and inside the room the caller made for it, and
// the call allocates little else, so a hostile input costs no more than the
// limit; and whatever decodes compresses, in both layouts, to something
// that decodes back to it.
//
// mode picks the codec (mode % len(codecs)) and whether the input is a bare
// chunk (the next bit); limit is taken modulo fuzzMaxLimit+1.
func FuzzDecompress(f *testing.F) {
	rng := rand.New(rand.NewPCG(9, 10))
	for i, cd := range codecs {
		bare := uint8(i + len(codecs))
		for _, src := range [][]byte{nil, []byte("hello, hello, hello, hello"), cellBytes(rng, 5000), make([]byte, 3000)} {
			one, err := blockcodec.Compress(nil, src, cd.c)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(uint8(i), uint32(len(src)), one)
			f.Add(uint8(i), uint32(len(src)), blockcodec.CompressPerChunk(nil, src, cd.c))
			f.Add(bare, uint32(len(src)), cd.c.AppendEncoded(nil, src))
		}
		enc := func(s string) []byte { return cd.c.AppendEncoded(nil, []byte(s)) }
		f.Add(uint8(i), uint32(10), group(10, enc("01234"), enc("56789")))
		f.Add(uint8(i), uint32(8), group(8, enc(""), enc("abc"), enc("defgh")))
		f.Add(uint8(i), uint32(100), append(group(0), 0xde, 0xad))
		f.Add(uint8(i), uint32(1<<16), group(1<<30, []byte{0}))
		f.Add(uint8(i), uint32(1<<16), group(100, append(binary.AppendUvarint(nil, 100), 0)))
	}
	// Build the codecs' shared state before measuring anything: the zstd
	// decoder keeps one block decoder per P and fills each on its first use.
	for range 2 * runtime.GOMAXPROCS(0) {
		for _, cd := range codecs {
			framed, _ := blockcodec.Compress(nil, cellBytes(rng, 3*cd.c.MaxChunk()/2), cd.c)
			if _, err := blockcodec.Decompress(nil, framed, 2*cd.c.MaxChunk(), cd.c); err != nil {
				f.Fatal(err)
			}
		}
	}
	f.Fuzz(func(t *testing.T, mode uint8, limit uint32, data []byte) {
		cd := codecs[int(mode)%len(codecs)]
		bare := int(mode)/len(codecs)%2 == 1
		n := int(limit % (fuzzMaxLimit + 1))
		// Room for exactly the limit after a 3-byte prefix.
		dst := append(make([]byte, 0, 3+n), "dst"...)
		var out []byte
		var err error
		alloc := allocatedBy(func() {
			if bare {
				out, err = cd.c.AppendDecoded(dst, data, n)
			} else {
				out, err = blockcodec.Decompress(dst, data, n, cd.c)
			}
		})
		if alloc > fuzzCodecSlack {
			t.Fatalf("%s: %d bytes of input with a limit of %d allocated %d bytes (err %v)", cd.name, len(data), n, alloc, err)
		}
		if !bare && cd.name == "snappy" {
			// Bytes used in place must be what decoding gives.
			if lit, ok := blockcodec.SnappyStored(data, n); ok && (err != nil || !bytes.Equal(lit, out[3:])) {
				t.Fatalf("snappy: SnappyStored took %d bytes that Decompress does not give (err %v)", len(lit), err)
			}
		}
		if err != nil {
			if string(out) != "dst" {
				t.Fatalf("%s: dst changed to %q on error %v", cd.name, out, err)
			}
			return
		}
		if len(out) < 3 || string(out[:3]) != "dst" {
			t.Fatalf("%s: dst not appended to", cd.name)
		}
		got := out[3:]
		if len(got) > n {
			t.Fatalf("%s: decoded %d bytes over a limit of %d", cd.name, len(got), n)
		}
		if cap(out) != cap(dst) || &out[0] != &dst[0] {
			t.Fatalf("%s: decoded outside the %d bytes of room the limit allows", cd.name, n)
		}

		one, err := blockcodec.Compress(nil, got, cd.c)
		if err != nil {
			t.Fatal(err)
		}
		for name, framed := range map[string][]byte{"one group": one, "per chunk": blockcodec.CompressPerChunk(nil, got, cd.c)} {
			back, err := blockcodec.Decompress(nil, framed, len(got), cd.c)
			if err != nil || !bytes.Equal(back, got) {
				t.Fatalf("%s: %d decoded bytes do not round trip (%s): %v", cd.name, len(got), name, err)
			}
		}
		if len(got) <= cd.c.MaxChunk() {
			back, err := cd.c.AppendDecoded(nil, cd.c.AppendEncoded(nil, got), len(got))
			if err != nil || !bytes.Equal(back, got) {
				t.Fatalf("%s: %d decoded bytes do not round trip as one chunk: %v", cd.name, len(got), err)
			}
		}
	})
}
