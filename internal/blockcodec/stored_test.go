package blockcodec_test

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/golang/snappy"
	"github.com/klauspost/compress/s2"
	"github.com/regionkv/regionkv/internal/blockcodec"
)

// TestSnappyStored checks that a chunk snappy cannot shrink by an eighth is
// written as one literal, that two independent decoders read it, and that
// SnappyStored finds its bytes in the framed stream; compressible chunks
// stay compressed and are not taken for stored ones.
func TestSnappyStored(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	random := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	// Sizes around the literal tag's length fields: 1..60 in the tag, then
	// 1, 2 and 3 extra bytes.
	for _, n := range []int{1, 2, 59, 60, 61, 62, 255, 256, 257, 3332, 65535, 65536, 65537, 65538, blockcodec.SnappyMaxChunk} {
		raw := random(n)
		framed, err := blockcodec.Compress(nil, raw, blockcodec.Snappy{})
		if err != nil {
			t.Fatal(err)
		}
		if len(framed) > 8+len(raw)+10 {
			t.Errorf("n=%d: stored chunk framed in %d bytes, want at most %d", n, len(framed), 8+len(raw)+10)
		}
		chunk := framed[8:]
		for name, dec := range map[string]func([]byte) ([]byte, error){
			"golang/snappy": func(b []byte) ([]byte, error) { return snappy.Decode(nil, b) },
			"s2":            func(b []byte) ([]byte, error) { return s2.Decode(nil, b) },
		} {
			got, err := dec(chunk)
			if err != nil || !bytes.Equal(got, raw) {
				t.Fatalf("n=%d: %s does not decode the stored chunk: %v", n, name, err)
			}
		}
		lit, ok := blockcodec.SnappyStored(framed, n)
		if !ok || !bytes.Equal(lit, raw) {
			t.Fatalf("n=%d: SnappyStored = %v, %d bytes; want the raw bytes", n, ok, len(lit))
		}
		if &lit[0] != &framed[len(framed)-n] {
			t.Errorf("n=%d: SnappyStored copied the bytes", n)
		}
		if _, ok := blockcodec.SnappyStored(framed, n+1); ok {
			t.Errorf("n=%d: SnappyStored accepted the wrong raw length", n)
		}
		if _, ok := blockcodec.SnappyStored(append(framed, 0), n); ok {
			t.Errorf("n=%d: SnappyStored accepted trailing bytes", n)
		}
		if _, ok := blockcodec.SnappyStored(framed[:len(framed)-1], n); ok {
			t.Errorf("n=%d: SnappyStored accepted a cut stream", n)
		}
	}

	// Compressible: snappy's own block, which SnappyStored leaves alone.
	raw := bytes.Repeat([]byte("row-00000001/cf:q/1700000000000/Put"), 100)
	framed, err := blockcodec.Compress(nil, raw, blockcodec.Snappy{})
	if err != nil {
		t.Fatal(err)
	}
	if len(framed) > len(raw)/2 {
		t.Fatalf("compressible chunk framed in %d bytes of %d", len(framed), len(raw))
	}
	if _, ok := blockcodec.SnappyStored(framed, len(raw)); ok {
		t.Error("SnappyStored took a compressed chunk for a stored one")
	}

	// Two chunks of one literal each, or two groups, are not one stored
	// chunk (the reader decodes them the usual way).
	lit := func(b []byte) []byte {
		return append(append(binary.AppendUvarint(nil, uint64(len(b))), byte(len(b)-1)<<2), b...)
	}
	if _, ok := blockcodec.SnappyStored(group(6, lit([]byte("abc")), lit([]byte("def"))), 6); ok {
		t.Error("SnappyStored took two chunks for one")
	}
	two := append(group(3, lit([]byte("abc"))), group(3, lit([]byte("def")))...)
	if _, ok := blockcodec.SnappyStored(two, 6); ok {
		t.Error("SnappyStored took two groups for one")
	}
	// A literal shorter than the chunk claims, followed by a copy.
	short := append(binary.AppendUvarint(nil, 6), 2<<2, 'a', 'b', 'c', 0x09, 3)
	if _, ok := blockcodec.SnappyStored(group(6, short), 6); ok {
		t.Error("SnappyStored took a literal plus a copy for a stored chunk")
	}
}
