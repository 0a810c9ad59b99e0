package hfile

import (
	"bytes"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestBloomMod checks the multiply-based remainder against the division it
// replaces, on the edges of both operands and on random pairs: a wrong bit
// would make blooms written by HBase answer "absent" for rows they hold.
func TestBloomMod(t *testing.T) {
	counts := []int64{8, 16, 24, 8 * 1000, 8 * 131072, 8 * 131071, math.MaxInt32 - 7, math.MaxInt32>>3<<3 - 8}
	hashes := []int32{0, 1, -1, 2, -2, 7, -7, math.MaxInt32, math.MinInt32, math.MinInt32 + 1, math.MaxInt32 - 1}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		counts = append(counts, 8*(1+rng.Int64N(math.MaxInt32>>3)))
	}
	for range 2000 {
		hashes = append(hashes, int32(rng.Uint32()))
	}
	for _, n := range counts {
		mod := newBloomMod(n)
		for _, c := range append(hashes, int32(n), int32(-n), int32(n-1), int32(1-n), int32(n+1)) {
			if got, want := mod.bit(c), bloomBit(c, n); got != uint64(want) {
				t.Fatalf("bitCount %d, hash %d: bloomMod %d, division %d", n, c, got, want)
			}
		}
	}
}

// TestBloomChunkForWords checks chunkFor's word search against the plain
// binary search over keys, on chunk keys that share prefixes of every
// length, end inside the word, hold zero bytes, and on probes around them.
func TestBloomChunkForWords(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	alphabet := []byte{0, 1, 'a', 'b', 0xff}
	randKey := func(prefix []byte) []byte {
		k := append([]byte(nil), prefix...)
		for range rng.IntN(12) {
			k = append(k, alphabet[rng.IntN(len(alphabet))])
		}
		return k
	}
	for trial := range 3000 {
		prefix := []byte("user0000")[:rng.IntN(9)]
		n := 1 + rng.IntN(12)
		keys := make([][]byte, 0, n)
		for range n {
			keys = append(keys, randKey(prefix))
		}
		slices.SortFunc(keys, bytes.Compare)
		f := &BloomFilter{Chunks: make([]BloomChunk, n)}
		for i, k := range keys {
			f.Chunks[i].FirstKey = k
		}
		plain := &BloomFilter{Chunks: f.Chunks}
		f.buildFirstWords()
		probes := [][]byte{nil, {}, prefix, randKey(nil), randKey(prefix)}
		for _, k := range keys {
			probes = append(probes, k, append(slices.Clone(k), 0), k[:len(k)/2])
			if len(k) > 0 {
				d := slices.Clone(k)
				d[len(d)-1]++
				probes = append(probes, d)
			}
		}
		for _, p := range probes {
			if got, want := f.chunkFor(p), plain.chunkFor(p); got != want {
				t.Fatalf("trial %d: chunks %q, probe %q: chunkFor %d, want %d", trial, keys, p, got, want)
			}
		}
	}
}
