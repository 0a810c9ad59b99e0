package hfile

import (
	"bytes"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/regionkv/regionkv/encoding"
	"github.com/stretchr/testify/require"
)

// readAll opens b and reads every cell, plus a few seeks and bloom probes,
// returning the cells' keys+values or the first error. It must never panic.
func readAll(b []byte) (cells []string, err error) {
	r, err := Open(bytes.NewReader(b), int64(len(b)), "fuzz", ReaderOptions{})
	if err != nil {
		return nil, err
	}
	it := r.NewIterator(false)
	var kv encoding.KeyValue
	ok, err := it.First()
	for ; ok && err == nil; ok, err = it.Next() {
		it.KeyValue(&kv)
		cells = append(cells, kv.String()+"="+string(kv.Value))
		if len(cells) > 1<<16 {
			break
		}
	}
	if err != nil {
		return cells, err
	}
	for _, row := range []string{"", "a", "m", "zzz"} {
		if _, err := it.SeekTo(encoding.FirstOnRow(nil, []byte(row))); err != nil {
			return cells, err
		}
		if _, err := it.SeekBefore(encoding.LastOnRow(nil, []byte(row))); err != nil {
			return cells, err
		}
		if _, err := r.MayContainRow([]byte(row)); err != nil {
			return cells, err
		}
		if _, err := r.MayContainRowCol([]byte(row), []byte("f"), []byte("q")); err != nil {
			return cells, err
		}
	}
	return cells, nil
}

func sampleFile(t testing.TB, enc encoding.DataBlockEncoding, comp Compression, bloom BloomType) []byte {
	rng := rand.New(rand.NewPCG(11, uint64(enc)))
	kvs := randomCells(rng, 400, false)
	var buf bytes.Buffer
	w, err := NewWriter(&buf, WriterOptions{BlockSize: 512, Encoding: enc, Compression: comp, BloomType: bloom, IndexBlockMaxSize: 256})
	require.NoError(t, err)
	for _, kv := range kvs {
		require.NoError(t, w.Append(kv))
	}
	require.NoError(t, w.Close())
	return buf.Bytes()
}

// TestBitFlips flips single bits all over the block section of written
// files: every read either fails with a corruption error or returns exactly
// the original cells. Blocks are checksummed, so a flip must never yield
// different data.
func TestBitFlips(t *testing.T) {
	for _, c := range []struct {
		enc  encoding.DataBlockEncoding
		comp Compression
	}{{encoding.EncodingNone, CompressionNone}, {encoding.EncodingPrefix, CompressionSnappy}, {encoding.EncodingFastDiff, CompressionGZ}, {encoding.EncodingFastDiff, CompressionZstd}, {encoding.EncodingRowIndexV1, CompressionSnappy}} {
		orig := sampleFile(t, c.enc, c.comp, BloomRowCol)
		want, err := readAll(orig)
		require.NoError(t, err)
		rng := rand.New(rand.NewPCG(5, uint64(c.comp)))
		body := len(orig) - TrailerSize
		for i := 0; i < 300; i++ {
			b := append([]byte(nil), orig...)
			pos := rng.IntN(body)
			b[pos] ^= 1 << rng.IntN(8)
			got, err := readAll(b)
			if err != nil {
				require.True(t, encoding.IsCorruption(err), "flip at %d: %v", pos, err)
				continue
			}
			require.Equal(t, want, got, "flip at %d (%s/%s) changed the data without an error", pos, c.enc, c.comp)
		}
	}
}

// TestTruncatedAndGarbage covers files cut short and files of noise.
func TestTruncatedAndGarbage(t *testing.T) {
	orig := sampleFile(t, encoding.EncodingPrefix, CompressionGZ, BloomRow)
	for _, n := range []int{0, 1, 100, TrailerSize - 1, TrailerSize, len(orig) / 2, len(orig) - 1} {
		_, err := readAll(orig[:n])
		require.Error(t, err, "truncated to %d", n)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	for i := 0; i < 50; i++ {
		b := make([]byte, TrailerSize+rng.IntN(8192))
		for j := range b {
			b[j] = byte(rng.Uint32())
		}
		_, err := readAll(b)
		require.Error(t, err)
	}
}

func FuzzReader(f *testing.F) {
	for _, enc := range []encoding.DataBlockEncoding{encoding.EncodingNone, encoding.EncodingPrefix, encoding.EncodingFastDiff, encoding.EncodingRowIndexV1} {
		f.Add(sampleFile(f, enc, CompressionNone, BloomRow))
	}
	f.Add(sampleFile(f, encoding.EncodingFastDiff, CompressionGZ, BloomRowCol))
	if b, err := os.ReadFile("testdata/v3-gz-rowbloom-25cells.hfile"); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = readAll(b)
	})
}
