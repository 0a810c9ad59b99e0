package encoding

import (
	"fmt"
	"github.com/stretchr/testify/require"
	"math/rand/v2"
	"testing"
)

// benchBlockSize is HBase's default block size; blocks are cut once their
// unencoded size reaches it.
const benchBlockSize = 64 << 10

// benchBlock returns PerformanceEvaluation-style cells (26-byte rows, family
// "info", qualifier "0", 100-byte random values, one timestamp, mvcc) that
// fill one block.
func benchBlock() ([]KeyValue, BlockFormat) {
	f := BlockFormat{IncludesMvcc: true}
	cells := peCells(rand.New(rand.NewPCG(1, 1)), 2000, 1, 100)
	size := 0
	for i := range cells {
		if size += noneSize(f, &cells[i]); size >= benchBlockSize {
			return cells[:i+1], f
		}
	}
	return cells, f
}

func BenchmarkEncode(b *testing.B) {
	cells, f := benchBlock()
	for _, enc := range testEncodings {
		b.Run(fmt.Sprintf("encoding=%s", enc), func(b *testing.B) {
			e, err := NewBlockEncoder(enc, f)
			if err != nil {
				b.Fatal(err)
			}
			for i := range cells {
				e.Add(&cells[i])
			}
			b.SetBytes(int64(e.UnencodedSize()))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				e.Reset()
				for j := range cells {
					e.Add(&cells[j])
				}
				_ = e.Finish()
			}
		})
	}
}

func BenchmarkDecode(b *testing.B) {
	cells, f := benchBlock()
	for _, enc := range testEncodings {
		b.Run(fmt.Sprintf("encoding=%s", enc), func(b *testing.B) {
			payload := encodeBlock(b, enc, f, cells)
			s, err := NewSeeker(enc, f, InnerStoreComparer)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(noneBlockSize(f, cells)))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := s.Init(payload); err != nil {
					b.Fatal(err)
				}
				n := 0
				for {
					n += len(s.Key()) + len(s.Value())
					ok, err := s.Next()
					if err != nil {
						b.Fatal(err)
					}
					if !ok {
						break
					}
				}
				if n == 0 {
					b.Fatal("nothing decoded")
				}
			}
		})
	}
}

// benchSeekKeys returns benchBlock's cells, their keys and a random order
// to seek them in.
func benchSeekKeys() ([]KeyValue, BlockFormat, []Key, []int) {
	cells, f := benchBlock()
	keys := make([]Key, len(cells))
	for i := range cells {
		keys[i] = cells[i].Key()
	}
	return cells, f, keys, rand.New(rand.NewPCG(2, 2)).Perm(len(keys))
}

// BenchmarkSeekInBlock measures a fresh seek (Rewind, then
// SeekToKeyInBlock) to a random key of a full block, which scans half the
// block on average. It must not allocate.
func BenchmarkSeekInBlock(b *testing.B) {
	cells, f, keys, order := benchSeekKeys()
	for _, enc := range testEncodings {
		b.Run(fmt.Sprintf("encoding=%s", enc), func(b *testing.B) {
			payload := encodeBlock(b, enc, f, cells)
			s, err := NewSeeker(enc, f, InnerStoreComparer)
			if err != nil {
				b.Fatal(err)
			}
			if err := s.Init(payload); err != nil {
				b.Fatal(err)
			}
			benchSeeks(b, s, keys, order)
		})
	}
}

// benchSeeks times fresh seeks (Rewind, then SeekToKeyInBlock) of s to
// keys, in order.
func benchSeeks(b *testing.B, s Seeker, keys []Key, order []int) {
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := s.Rewind(); err != nil {
			b.Fatal(err)
		}
		if res, err := s.SeekToKeyInBlock(keys[order[i%len(order)]], false); err != nil || res != SeekExact {
			b.Fatal(res, err)
		}
	}
}

func noneBlockSize(f BlockFormat, cells []KeyValue) int {
	n := 0
	for i := range cells {
		n += noneSize(f, &cells[i])
	}
	return n
}

// BenchmarkEncodedSize reports how large PREFIX and FAST_DIFF blocks are
// relative to NONE (metric size/none) for two PerformanceEvaluation-like
// data sets, cut into 64 KiB blocks:
//
//   - data=pe: 26-byte zero-padded rows, family "info", qualifier "0",
//     100-byte random values, one timestamp, mvcc included;
//   - data=pe10col: the same rows with qualifiers "0".."9" and 10-byte values.
//
// It is a benchmark so that the figures are reported, not timed, in normal
// test runs: go test -run '^$' -bench EncodedSize ./encoding/
func BenchmarkEncodedSize(b *testing.B) {
	f := BlockFormat{IncludesMvcc: true}
	datasets := []struct {
		name  string
		cells []KeyValue
	}{
		{"pe", peCells(rand.New(rand.NewPCG(3, 3)), 2000, 1, 100)},
		{"pe10col", peCells(rand.New(rand.NewPCG(4, 4)), 400, 10, 10)},
	}
	for _, ds := range datasets {
		none := encodedSize(b, EncodingNone, f, ds.cells)
		for _, enc := range testEncodings {
			b.Run(fmt.Sprintf("data=%s/encoding=%s", ds.name, enc), func(b *testing.B) {
				var size int
				for i := 0; i < b.N; i++ {
					size = encodedSize(b, enc, f, ds.cells)
				}
				b.ReportMetric(float64(size)/float64(none), "size/none")
				b.ReportMetric(float64(size)/float64(len(ds.cells)), "B/cell")
			})
		}
	}
}

// encodedSize returns the total payload size of cells cut into blocks of
// benchBlockSize unencoded bytes.
func encodedSize(b *testing.B, enc DataBlockEncoding, f BlockFormat, cells []KeyValue) int {
	e, err := NewBlockEncoder(enc, f)
	if err != nil {
		b.Fatal(err)
	}
	total := 0
	for i := range cells {
		e.Add(&cells[i])
		if e.UnencodedSize() >= benchBlockSize || i == len(cells)-1 {
			total += len(e.Finish())
			e.Reset()
		}
	}
	return total
}

// BenchmarkSeekFreshBlock measures what a point read does in a cached
// block: Init the seeker on the block (it holds no decoded cells of it) and
// seek to a random key, without and with the block's RestartIndex. Without,
// the seek decodes half the block on average; with, at most
// RestartInterval cells after a binary search of the samples.
func BenchmarkSeekFreshBlock(b *testing.B) {
	cells, f, keys, order := benchSeekKeys()
	for _, enc := range testEncodings {
		for _, indexed := range []bool{false, true} {
			b.Run(fmt.Sprintf("encoding=%s/indexed=%t", enc, indexed), func(b *testing.B) {
				payload := encodeBlock(b, enc, f, cells)
				s, err := NewSeeker(enc, f, InnerStoreComparer)
				if err != nil {
					b.Fatal(err)
				}
				var idx *RestartIndex
				if indexed {
					if err := s.Init(payload); err != nil {
						b.Fatal(err)
					}
					if idx, err = s.BuildRestartIndex(); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if err := s.InitIndexed(payload, idx); err != nil {
						b.Fatal(err)
					}
					if res, err := s.SeekToKeyInBlock(keys[order[i%len(order)]], false); err != nil || res != SeekExact {
						b.Fatal(res, err)
					}
				}
			})
		}
	}
}

// BenchmarkSeekIndexed measures a point read's seek in a cached 4 KiB
// block (hfile's default size) whose RestartIndex is built: a binary search
// of the samples, then a linear decode of at most RestartInterval cells.
func BenchmarkSeekIndexed(b *testing.B) {
	f := BlockFormat{IncludesMvcc: true}
	all := peCells(rand.New(rand.NewPCG(1, 1)), 200, 1, 100)
	size, n := 0, 0
	for n < len(all) && size < 4<<10 {
		size += noneSize(f, &all[n])
		n++
	}
	cells := all[:n]
	for i := range cells {
		cells[i].SeqNum = SeqNum(500000 + i) // a compacted file's sequence ids
	}
	keys := make([]Key, len(cells))
	for i := range cells {
		keys[i] = cells[i].Key()
	}
	order := rand.New(rand.NewPCG(2, 2)).Perm(len(keys))
	for _, enc := range testEncodings {
		b.Run(fmt.Sprintf("encoding=%s", enc), func(b *testing.B) {
			payload, s, idx := indexedBlock(b, enc, f, InnerStoreComparer, cells)
			require.NoError(b, s.InitIndexed(payload, idx))
			benchSeeks(b, s, keys, order)
		})
	}
}
