package blockcodec_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/regionkv/regionkv/internal/blockcodec"
	"github.com/regionkv/regionkv/internal/blockcodec/zstdcodec"
)

// codecs are every codec of blockcodec and its subpackages.
var codecs = []struct {
	name string
	c    blockcodec.Codec
}{
	{"snappy", blockcodec.Snappy{}},
	{"zstd", zstdcodec.Codec{}},
}

// cellBytes returns n bytes that look like cells: keys with shared prefixes
// and a few random bytes, so codecs have work to do but cannot shrink them
// to nothing.
func cellBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, 0, n+64)
	for i := 0; len(b) < n; i++ {
		b = fmt.Appendf(b, "\x00\x00\x00\x1crow-%08d\x02cfqual%d%c%c", i/3, i%3, 'a'+rng.IntN(26), rng.IntN(256))
	}
	return b[:n]
}

// group frames chunks, already compressed, as one group of rawLen bytes.
func group(rawLen uint32, chunks ...[]byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, rawLen)
	for _, c := range chunks {
		b = binary.BigEndian.AppendUint32(b, uint32(len(c)))
		b = append(b, c...)
	}
	return b
}

// walk splits a stream into its groups' raw lengths and chunk counts,
// decoding each chunk with c, and fails on anything not well framed.
func walk(t *testing.T, b []byte, c blockcodec.Codec) (rawLens, chunks []int) {
	t.Helper()
	for len(b) > 0 {
		if len(b) < 4 {
			t.Fatalf("%d bytes left for a raw length", len(b))
		}
		raw := int(binary.BigEndian.Uint32(b))
		b = b[4:]
		got, n := 0, 0
		for ; got < raw; n++ {
			if len(b) < 4 || int(binary.BigEndian.Uint32(b)) > len(b)-4 {
				t.Fatalf("group %d: bad chunk length, %d bytes left", len(rawLens), len(b))
			}
			l := int(binary.BigEndian.Uint32(b))
			out, err := c.AppendDecoded(nil, b[4:4+l], raw-got)
			if err != nil {
				t.Fatalf("group %d, chunk %d: %v", len(rawLens), n, err)
			}
			got += len(out)
			b = b[4+l:]
		}
		rawLens, chunks = append(rawLens, raw), append(chunks, n)
	}
	return rawLens, chunks
}

func TestMaxChunk(t *testing.T) {
	// Hadoop's SnappyCodec and HBase's ZstdCodec with their default 256 KiB
	// buffers.
	for _, tc := range []struct {
		c    blockcodec.Codec
		want int
	}{{blockcodec.Snappy{}, 218422}, {zstdcodec.Codec{}, 261120}} {
		if got := tc.c.MaxChunk(); got != tc.want {
			t.Errorf("%T.MaxChunk() = %d, want %d", tc.c, got, tc.want)
		}
	}
}

func TestCompressLayout(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, cd := range codecs {
		t.Run(cd.name, func(t *testing.T) {
			maxChunk := cd.c.MaxChunk()
			for _, n := range []int{1, 1000, maxChunk, maxChunk + 1, 3*maxChunk + 5} {
				src := cellBytes(rng, n)
				chunks := (n + maxChunk - 1) / maxChunk

				one, err := blockcodec.Compress(nil, src, cd.c)
				if err != nil {
					t.Fatal(err)
				}
				if raws, cs := walk(t, one, cd.c); len(raws) != 1 || raws[0] != n || cs[0] != chunks {
					t.Errorf("Compress of %d bytes: groups %v of %v chunks, want one of %d", n, raws, cs, chunks)
				}
				per := blockcodec.CompressPerChunk(nil, src, cd.c)
				raws, cs := walk(t, per, cd.c)
				if len(raws) != chunks {
					t.Errorf("CompressPerChunk of %d bytes: %d groups, want %d", n, len(raws), chunks)
				}
				for i := range raws {
					if raws[i] > maxChunk || cs[i] != 1 {
						t.Errorf("CompressPerChunk group %d: %d bytes in %d chunks", i, raws[i], cs[i])
					}
				}
				for name, framed := range map[string][]byte{"one group": one, "per chunk": per} {
					got, err := blockcodec.Decompress([]byte("dst"), framed, n, cd.c)
					if err != nil || string(got[:3]) != "dst" || !bytes.Equal(got[3:], src) {
						t.Fatalf("%s, %d bytes: round trip failed: %v", name, n, err)
					}
					if _, err := blockcodec.Decompress(nil, framed, n-1, cd.c); err == nil {
						t.Fatalf("%s, %d bytes: decoded with a limit one byte short", name, n)
					}
				}
			}
			if b, _ := blockcodec.Compress(nil, nil, cd.c); !bytes.Equal(b, []byte{0, 0, 0, 0}) {
				t.Errorf("Compress(empty) = %x, want the end mark", b)
			}
			if b := blockcodec.CompressPerChunk([]byte("x"), nil, cd.c); string(b) != "x" {
				t.Errorf("CompressPerChunk(empty) = %x, want nothing appended", b)
			}
		})
	}
}

// TestDecompressStreams reads layouts Hadoop writers produce besides ours:
// several groups, several chunks per group, empty chunks, the end mark.
func TestDecompressStreams(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	src := cellBytes(rng, 9000)
	a, b, c := src[:1000], src[1000:5000], src[5000:]
	for _, cd := range codecs {
		t.Run(cd.name, func(t *testing.T) {
			enc := func(p []byte) []byte { return cd.c.AppendEncoded(nil, p) }
			multi := append(group(uint32(len(a)+len(b)), enc(a), enc(nil), enc(b)), group(uint32(len(c)), enc(c))...)
			for _, tc := range []struct {
				name   string
				stream []byte
				want   []byte
			}{
				{"groups of several chunks", multi, src},
				{"end mark", append(append([]byte{}, multi...), 0, 0, 0, 0), src},
				// Hadoop reads nothing after the end mark, nor do we.
				{"end mark then junk", append(append([]byte{}, multi...), 0, 0, 0, 0, 0xde, 0xad), src},
				{"end mark then a group", append(group(0), group(uint32(len(a)), enc(a))...), nil},
				{"end mark alone", group(0), nil},
				{"nothing", nil, nil},
			} {
				got, err := blockcodec.Decompress(nil, tc.stream, len(src), cd.c)
				if err != nil || !bytes.Equal(got, tc.want) {
					t.Errorf("%s: %d bytes, %v; want %d bytes", tc.name, len(got), err, len(tc.want))
				}
			}
		})
	}
}

// TestDecompressRejects checks that hostile framing is an error, leaves dst
// alone and costs little memory, however much it claims to hold.
func TestDecompressRejects(t *testing.T) {
	small := []byte("0123456789012345678901234567890123456789")
	for _, cd := range codecs {
		t.Run(cd.name, func(t *testing.T) {
			enc := cd.c.AppendEncoded(nil, small)
			valid := group(uint32(len(small)), enc)
			// A chunk of a whole chunk's worth of zeros in a group that says
			// 4096 bytes.
			big := cd.c.AppendEncoded(nil, make([]byte, cd.c.MaxChunk()))
			lying := group(4096, big)
			// A snappy header claiming 100 MB in 4 bytes: refused before
			// allocating, whatever the limit. Zstd frames do not say how much
			// they hold until decoded, so the zstd codec makes room for its
			// whole group first and only the limit bounds that; it gets a
			// limit below the claim.
			liar, liarLimit := group(100<<20, append(binary.AppendUvarint(nil, 100<<20), 0)), 1<<30
			if cd.name != "snappy" {
				liarLimit = 100 << 10
			}
			for _, tc := range []struct {
				name  string
				in    []byte
				limit int
			}{
				{"short raw length", []byte{0, 0, 1}, 1 << 20},
				{"raw length only", valid[:4], 1 << 20},
				{"short chunk length", valid[:6], 1 << 20},
				{"truncated chunk", valid[:len(valid)-1], 1 << 20},
				{"chunk length overruns", group(uint32(len(small)), append(enc, 0))[:len(valid)], 1 << 20},
				{"chunk length negative", append(binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, 40), 0xffffffff), enc...), 1 << 20},
				{"raw above the limit", group(1<<30, enc), 1 << 20},
				{"raw negative", group(0xffffffff, enc), 1 << 30},
				{"raw one above the limit", valid, len(small) - 1},
				{"second group above the limit", append(append([]byte{}, valid...), valid...), len(small) + 1},
				{"chunk decodes past its group", group(uint32(len(small)-1), enc), 1 << 20},
				{"chunks fall short of the group", group(uint32(len(small)+1), enc), 1 << 20},
				{"corrupt chunk", group(uint32(len(small)), []byte{byte(len(small)), 0xff, 0xff, 0xff, 0xff}), 1 << 20},
				{"junk after a group", append(append([]byte{}, valid...), 1, 2, 3, 4), 1 << 20},
				{"bomb in a small group", lying, 1 << 30},
				{"lying snappy header", liar, liarLimit},
				{"negative limit", valid, -1},
			} {
				dst := []byte("dst")
				var out []byte
				var err error
				// Warm the codec so that only the call is measured.
				_, _ = blockcodec.Decompress(nil, tc.in, tc.limit, cd.c)
				n := allocatedBy(func() { out, err = blockcodec.Decompress(dst, tc.in, tc.limit, cd.c) })
				if err == nil {
					t.Errorf("%s: %d bytes, want an error", tc.name, len(out))
					continue
				}
				if string(out) != "dst" {
					t.Errorf("%s: dst changed to %q on error", tc.name, out)
				}
				// One zstd block (128 KiB) of overshoot inside the decoder is
				// the documented worst case.
				if n > 512<<10 {
					t.Errorf("%s: rejecting it allocated %d bytes", tc.name, n)
				}
			}
			// Every proper prefix of a group is refused.
			for i := 1; i < len(valid); i++ {
				if out, err := blockcodec.Decompress(nil, valid[:i], 1<<20, cd.c); err == nil {
					t.Fatalf("prefix of %d/%d bytes accepted as %q", i, len(valid), out)
				}
			}
		})
	}
}

// allocatedBy returns how many bytes fn allocated.
func allocatedBy(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func BenchmarkDecompress(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	src := cellBytes(rng, 64<<10)
	for _, cd := range codecs {
		framed, err := blockcodec.Compress(nil, src, cd.c)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("codec=%s/size=%d", cd.name, len(src)), func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			b.ReportAllocs()
			dst := make([]byte, 0, len(src))
			for b.Loop() {
				if _, err := blockcodec.Decompress(dst[:0], framed, len(src), cd.c); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
