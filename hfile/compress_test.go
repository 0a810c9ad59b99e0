package hfile

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/cockroachdb/errors"
	"github.com/klauspost/compress/zstd"
	"github.com/regionkv/regionkv/encoding"
)

// codecFixtureName is the HBase-written v3 file (GZ, ROW bloom, 25 cells)
// described in shared/docs/hbase-storage-facts.md §3.
const codecFixtureName = "v3-gz-rowbloom-25cells.hfile"

// readCodecFixture returns one of the HBase-written files, from this
// package's testdata or, failing that, from shared/testdata/hbase-hfiles
// beside the checkout.
func readCodecFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		b, err = os.ReadFile(filepath.Join("..", "..", "shared", "testdata", "hbase-hfiles", name))
	}
	if err != nil {
		t.Fatalf("fixture: %v", err)
	}
	return b
}

// codecFixtureBlock returns the stored (compressed) payload of the block at
// off and its uncompressed size, read straight from the 33-byte header:
// uncompressedSizeWithoutHeader at 12, onDiskDataSizeWithHeader at 29.
func codecFixtureBlock(t testing.TB, file []byte, off int) (payload []byte, uncompressed int) {
	t.Helper()
	uncompressed = int(binary.BigEndian.Uint32(file[off+12:]))
	dataWithHeader := int(binary.BigEndian.Uint32(file[off+29:]))
	return file[off+33 : off+dataWithHeader], uncompressed
}

var supportedCompressions = []Compression{CompressionNone, CompressionGZ, CompressionSnappy, CompressionZstd}

// compressibleBytes returns n bytes that look like a block of cells: keys
// with shared prefixes and small counters, so every codec has work to do.
func compressibleBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, 0, n+64)
	for i := 0; len(b) < n; i++ {
		b = fmt.Appendf(b, "\x00\x00\x00\x1crow-%08d\x02cfqual%d\x00\x00\x01\x95%c", i/3, i%3, 'a'+rng.IntN(4))
	}
	return b[:n]
}

func randomBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

func TestCompressionNames(t *testing.T) {
	for i, name := range []string{"lzo", "gz", "none", "snappy", "lz4", "bzip2", "zstd", "lzma", "brotli"} {
		c := CompressionOfOrdinal(uint32(i))
		if got := c.String(); got != name {
			t.Errorf("Compression(%d).String() = %q, want %q", i, got, name)
		}
		for _, in := range []string{name, string(bytes.ToUpper([]byte(name)))} {
			if got, err := ParseCompression(in); err != nil || got != c {
				t.Errorf("ParseCompression(%q) = %v, %v; want %v", in, got, err, c)
			}
		}
	}
	// The trailer stores these ordinals; pin the ones we implement.
	for c, want := range map[Compression]uint32{CompressionGZ: 1, CompressionNone: 2, CompressionSnappy: 3, CompressionZstd: 6} {
		if c.Ordinal() != want {
			t.Errorf("%s = %d, want %d", c, c.Ordinal(), want)
		}
		if got := CompressionOfOrdinal(want); got != c {
			t.Errorf("CompressionOfOrdinal(%d) = %s, want %s", want, got, c)
		}
	}
	var zero Compression
	if zero != CompressionNone {
		t.Errorf("zero Compression is %s, want none", zero)
	}
	if _, err := ParseCompression("gzip2"); err == nil {
		t.Error("ParseCompression(gzip2) succeeded")
	}
	if got := Compression(42).String(); got != "unknown(42)" {
		t.Errorf("Compression(42).String() = %q", got)
	}
	for _, c := range supportedCompressions {
		if err := c.Supported(); err != nil {
			t.Errorf("%s: %v", c, err)
		}
	}
	for _, c := range []Compression{CompressionLZO, CompressionLZ4, CompressionBzip2, CompressionLZMA, CompressionBrotli, 42} {
		if err := c.Supported(); !errors.Is(err, ErrUnsupportedCompression) {
			t.Errorf("%s.Supported() = %v", c, err)
		}
		if _, err := c.Compress(nil, []byte("x")); !errors.Is(err, ErrUnsupportedCompression) {
			t.Errorf("%s.Compress: %v", c, err)
		}
		_, err := c.Decompress(nil, []byte("x"), 1)
		if !errors.Is(err, ErrUnsupportedCompression) || encoding.IsCorruption(err) {
			t.Errorf("%s.Decompress: %v", c, err)
		}
	}
}

func TestCompressRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	prefix := []byte("33-byte block header placeholder!")
	for _, c := range supportedCompressions {
		for _, size := range []int{0, 1, 1000, 64 << 10, 1 << 20} {
			for _, kind := range []string{"random", "compressible"} {
				var src []byte
				if kind == "random" {
					src = randomBytes(rng, size)
				} else {
					src = compressibleBytes(rng, size)
				}
				t.Run(fmt.Sprintf("%s/size=%d/%s", c, size, kind), func(t *testing.T) {
					comp, err := c.Compress(append([]byte(nil), prefix...), src)
					if err != nil {
						t.Fatal(err)
					}
					if !bytes.HasPrefix(comp, prefix) {
						t.Fatal("Compress did not append to dst")
					}
					comp = comp[len(prefix):]
					if kind == "compressible" && size >= 1000 && c != CompressionNone && len(comp) > size/2 {
						t.Errorf("compressible %d bytes compressed to %d", size, len(comp))
					}
					got, err := c.Decompress(append([]byte(nil), prefix...), comp, size)
					if err != nil {
						t.Fatal(err)
					}
					if !bytes.HasPrefix(got, prefix) || !bytes.Equal(got[len(prefix):], src) {
						t.Fatal("round trip mismatch")
					}
					// Output is sized by the header's size (up to the
					// allocator's size class), never by the stream.
					out, err := c.Decompress(nil, comp, size)
					if err != nil || cap(out) < size || cap(out) > size+size/8+64 {
						t.Fatalf("Decompress(nil): cap %d for %d bytes (err %v)", cap(out), size, err)
					}
				})
			}
		}
	}
}

func TestCompressGzipMatchesJDK(t *testing.T) {
	file := readCodecFixture(t, codecFixtureName)
	jdkHeader := []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0}
	for _, off := range []int{0, 214, 306, 386, 443, 819} {
		if p, _ := codecFixtureBlock(t, file, off); !bytes.HasPrefix(p, jdkHeader) {
			t.Fatalf("fixture block at %d: header % x", off, p[:10])
		}
	}
	comp, err := CompressionGZ.Compress(nil, []byte("some block"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(comp, jdkHeader) {
		t.Errorf("gzip header % x, want % x", comp[:10], jdkHeader)
	}
	// The empty meta index block at 386: HBase's 20-byte empty member.
	empty, _ := codecFixtureBlock(t, file, 386)
	comp, err = CompressionGZ.Compress(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(comp, empty) {
		t.Errorf("empty gzip block %x, want %x", comp, empty)
	}
	if out, err := CompressionGZ.Decompress(nil, empty, 0); err != nil || len(out) != 0 {
		t.Errorf("Decompress(empty member) = %x, %v", out, err)
	}
}

func TestDecompressFixture(t *testing.T) {
	file := readCodecFixture(t, codecFixtureName)
	// First data block: 25 cells aaa..aay, 725 bytes uncompressed.
	payload, size := codecFixtureBlock(t, file, 0)
	if size != 725 || len(payload) != 210-33 {
		t.Fatalf("fixture header: size %d, payload %d", size, len(payload))
	}
	block, err := CompressionGZ.Decompress(nil, payload, size)
	if err != nil {
		t.Fatal(err)
	}
	if len(block) != 725 {
		t.Fatalf("decompressed %d bytes", len(block))
	}
	// keyLen 17, valueLen 3, then the key of aaa/cf.
	if want := []byte("\x00\x00\x00\x11\x00\x00\x00\x03\x00\x03aaa\x02cf"); !bytes.HasPrefix(block, want) {
		t.Errorf("block starts % x, want % x", block[:len(want)], want)
	}
	// The ROW bloom chunk at 214.
	payload, size = codecFixtureBlock(t, file, 214)
	chunk, err := CompressionGZ.Decompress(nil, payload, size)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := hex.EncodeToString(chunk), "5410e8b0696b0c6d3a76b8ea798d7846def2e4ead2a12aa02fc0e2c35be01f27"; got != want {
		t.Errorf("bloom chunk %s, want %s", got, want)
	}
	// The size must be exact.
	payload, size = codecFixtureBlock(t, file, 0)
	for _, bad := range []int{size - 1, size + 1} {
		if _, err := CompressionGZ.Decompress(nil, payload, bad); !encoding.IsCorruption(err) {
			t.Errorf("size %d instead of %d: %v", bad, size, err)
		}
	}
	// The corrupt fixture: gzip magic zeroed, as HBase's test expects "not a gzip file".
	bad := readCodecFixture(t, "v3-gz-corrupt-block.hfile")
	payload, size = codecFixtureBlock(t, bad, 0)
	if _, err := CompressionGZ.Decompress(nil, payload, size); !encoding.IsCorruption(err) {
		t.Errorf("corrupt fixture block: %v", err)
	}
}

// TestBlockFraming pins the layout we write and reads layouts other Hadoop
// writers produce: several rawLen groups, several chunks per group, and the
// zero rawLen end marker.
func TestBlockFraming(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	src := compressibleBytes(rng, 1<<20)
	for _, tc := range []struct {
		c        Compression
		maxChunk int
	}{{CompressionSnappy, 218422}, {CompressionZstd, 261120}} {
		t.Run(tc.c.String(), func(t *testing.T) {
			comp, err := tc.c.Compress(nil, src)
			if err != nil {
				t.Fatal(err)
			}
			if raw := binary.BigEndian.Uint32(comp); raw != 1<<20 {
				t.Fatalf("rawLen %d", raw)
			}
			rest, chunks := comp[4:], 0
			for len(rest) > 0 {
				n := int(binary.BigEndian.Uint32(rest))
				rest = rest[4+n:]
				chunks++
			}
			if want := (1<<20 + tc.maxChunk - 1) / tc.maxChunk; chunks != want {
				t.Errorf("%d chunks, want %d", chunks, want)
			}
			if empty, _ := tc.c.Compress(nil, nil); !bytes.Equal(empty, []byte{0, 0, 0, 0}) {
				t.Errorf("empty block framed as %x", empty)
			}

			// Build a stream by hand: group 1 = two chunks, group 2 = one
			// chunk, then an end marker and junk after it.
			enc := func(b []byte) []byte {
				out, err := tc.c.Compress(nil, b)
				if err != nil {
					t.Fatal(err)
				}
				return out[4:] // drop rawLen: {compLen, chunk}
			}
			a, b, c := src[:1000], src[1000:5000], src[5000:9000]
			var s []byte
			s = binary.BigEndian.AppendUint32(s, uint32(len(a)+len(b)))
			s = append(s, enc(a)...)
			s = append(s, enc(b)...)
			s = binary.BigEndian.AppendUint32(s, uint32(len(c)))
			s = append(s, enc(c)...)
			got, err := tc.c.Decompress(nil, s, 9000)
			if err != nil || !bytes.Equal(got, src[:9000]) {
				t.Fatalf("multi-group stream: %v", err)
			}
			s = append(s, 0, 0, 0, 0, 0xde, 0xad)
			if got, err := tc.c.Decompress(nil, s, 9000); err != nil || !bytes.Equal(got, src[:9000]) {
				t.Fatalf("stream with end marker: %v", err)
			}
			// Junk that is not an end marker is corruption.
			s = append(s[:len(s)-6], 1, 2, 3, 4)
			if _, err := tc.c.Decompress(nil, s, 9000); !encoding.IsCorruption(err) {
				t.Fatalf("trailing junk: %v", err)
			}
			// A group larger than the block, and an early end marker.
			for _, bad := range [][]byte{
				binary.BigEndian.AppendUint32(nil, 9001),
				{0, 0, 0, 0},
				{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 1},
			} {
				if _, err := tc.c.Decompress(nil, bad, 9000); !encoding.IsCorruption(err) {
					t.Errorf("framing %x: %v", bad, err)
				}
			}
		})
	}
}

// TestZstdPlainStream reads what Hadoop's ZStandardCodec writes: bare zstd
// frames, with or without a content size, possibly several.
func TestZstdPlainStream(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	src := compressibleBytes(rng, 300<<10)
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest))
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	// EncodeAll writes the frame content size.
	withSize := enc.EncodeAll(src, nil)
	// The streaming encoder does not know the size up front.
	var buf bytes.Buffer
	sw, err := zstd.NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sw.Write(src); err != nil {
		t.Fatal(err)
	}
	if err := sw.Close(); err != nil {
		t.Fatal(err)
	}
	noSize := buf.Bytes()
	twoFrames := append(enc.EncodeAll(src[:100<<10], nil), enc.EncodeAll(src[100<<10:], nil)...)
	for name, stream := range map[string][]byte{"fcs": withSize, "no-fcs": noSize, "two-frames": twoFrames} {
		if !bytes.HasPrefix(stream, zstdMagic) {
			t.Fatalf("%s: no magic", name)
		}
		got, err := CompressionZstd.Decompress(nil, stream, len(src))
		if err != nil || !bytes.Equal(got, src) {
			t.Errorf("%s: %v", name, err)
		}
		for _, bad := range []int{len(src) - 1, len(src) + 1} {
			if _, err := CompressionZstd.Decompress(nil, stream, bad); !encoding.IsCorruption(err) {
				t.Errorf("%s with size %d: %v", name, bad, err)
			}
		}
	}
}

func TestDecompressCorrupt(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	src := compressibleBytes(rng, 20000)
	for _, c := range supportedCompressions {
		t.Run(c.String(), func(t *testing.T) {
			comp, err := c.Compress(nil, src)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Decompress(nil, comp, -1); !encoding.IsCorruption(err) {
				t.Errorf("negative size: %v", err)
			}
			for _, n := range []int{0, 1, 3, 4, 5, 8, 10, len(comp) / 2, len(comp) - 1} {
				if _, err := c.Decompress(nil, comp[:n], len(src)); !encoding.IsCorruption(err) {
					t.Errorf("truncated to %d of %d: %v", n, len(comp), err)
				}
			}
			// Flipped bytes: snappy has no checksum, so a flip may decode
			// to other bytes of the right length; anything else must be
			// reported as corruption.
			for i := 0; i < 200; i++ {
				bad := append([]byte(nil), comp...)
				bad[rng.IntN(len(bad))] ^= byte(1 + rng.IntN(255))
				out, err := c.Decompress(nil, bad, len(src))
				if err != nil && !encoding.IsCorruption(err) {
					t.Fatalf("flip: unmarked error %v", err)
				}
				if err == nil && len(out) != len(src) {
					t.Fatalf("flip: %d bytes without error", len(out))
				}
				if err == nil && c == CompressionGZ && !bytes.Equal(out, src) {
					t.Fatal("gzip CRC missed a flipped byte")
				}
			}
		})
	}
}

// TestDecompressBomb checks that a tiny payload that expands enormously
// costs no more memory than the block size the header claims.
func TestDecompressBomb(t *testing.T) {
	zeros := make([]byte, 16<<20)
	zw, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer zw.Close()
	var stream bytes.Buffer
	sw, _ := zstd.NewWriter(&stream)
	_, _ = sw.Write(zeros)
	_ = sw.Close()

	gz, _ := CompressionGZ.Compress(nil, zeros)
	sn, _ := CompressionSnappy.Compress(nil, zeros)
	framed, _ := CompressionZstd.Compress(nil, zeros)
	// Hadoop framing whose rawLen is honest about a small group but whose
	// chunk decodes to 16 MiB.
	lying := binary.BigEndian.AppendUint32(nil, 4096)
	lying = append(lying, framed[4:]...)
	for _, tc := range []struct {
		name    string
		c       Compression
		payload []byte
	}{
		{"gz", CompressionGZ, gz},
		{"snappy", CompressionSnappy, sn},
		{"zstd-framed", CompressionZstd, framed},
		{"zstd-lying-group", CompressionZstd, lying},
		{"zstd-fcs", CompressionZstd, zw.EncodeAll(zeros, nil)},
		{"zstd-no-fcs", CompressionZstd, stream.Bytes()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const size = 4096
			// Warm pools and lazily built decoders so only the call is measured.
			_, _ = tc.c.Decompress(nil, tc.payload, size)
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, err := tc.c.Decompress(nil, tc.payload, size)
			runtime.ReadMemStats(&after)
			if !encoding.IsCorruption(err) {
				t.Fatalf("16 MiB payload declared as %d bytes: %v", size, err)
			}
			// One zstd block (128 KiB) of overshoot is the documented worst case.
			alloc := after.TotalAlloc - before.TotalAlloc
			t.Logf("allocated %d bytes", alloc)
			if alloc > 512<<10 {
				t.Errorf("allocated %d bytes", alloc)
			}
		})
	}
}

func FuzzDecompress(f *testing.F) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, c := range supportedCompressions {
		for _, size := range []int{0, 1, 100, 5000} {
			src := compressibleBytes(rng, size)
			comp, err := c.Compress(nil, src)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(uint8(c), uint32(size), comp)
		}
	}
	f.Fuzz(func(t *testing.T, alg uint8, size uint32, payload []byte) {
		c := supportedCompressions[int(alg)%len(supportedCompressions)]
		n := int(size % (256 << 10))
		out, err := c.Decompress([]byte("hdr"), payload, n)
		if err != nil {
			if !encoding.IsCorruption(err) {
				t.Fatalf("%s: error not marked as corruption: %v", c, err)
			}
			if string(out) != "hdr" {
				t.Fatalf("%s: dst changed on error", c)
			}
			return
		}
		if len(out) != 3+n {
			t.Fatalf("%s: %d bytes, want %d", c, len(out)-3, n)
		}
		// Whatever decodes must re-encode and decode to the same bytes.
		again, err := c.Compress(nil, out[3:])
		if err != nil {
			t.Fatal(err)
		}
		back, err := c.Decompress(nil, again, n)
		if err != nil || !bytes.Equal(back, out[3:]) {
			t.Fatalf("%s: round trip of decoded bytes failed: %v", c, err)
		}
	})
}

func BenchmarkCompress(b *testing.B) {
	rng := rand.New(rand.NewPCG(11, 12))
	src := compressibleBytes(rng, 64<<10)
	for _, c := range supportedCompressions {
		b.Run(fmt.Sprintf("alg=%s/size=%d", c, len(src)), func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			b.ReportAllocs()
			var dst []byte
			var err error
			for i := 0; i < b.N; i++ {
				if dst, err = c.Compress(dst[:0], src); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(src))/float64(len(dst)), "ratio")
		})
	}
}

func BenchmarkDecompress(b *testing.B) {
	rng := rand.New(rand.NewPCG(11, 12))
	src := compressibleBytes(rng, 64<<10)
	for _, c := range supportedCompressions {
		comp, err := c.Compress(nil, src)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("alg=%s/size=%d", c, len(src)), func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			b.ReportAllocs()
			dst := make([]byte, 0, len(src))
			for i := 0; i < b.N; i++ {
				if _, err := c.Decompress(dst[:0], comp, len(src)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
