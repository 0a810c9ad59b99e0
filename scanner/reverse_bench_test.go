package scanner

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/hfile"
	"github.com/stretchr/testify/require"
)

// Benchmarks of a StoreFileScanner walking one HFile of PE-style rows
// (`regionsrv pe sequentialWrite`: 26-digit row keys, info0:0, values of
// letters in runs of eight) backwards, as a reversed scan does, and forwards
// for comparison, with every block in a block cache: the steady state of a
// hot reverse scan, which must not allocate.
//
//	go test ./scanner -run '^$' -bench 'StoreFileScanner' -benchtime 2000000x

// blockMapCache is an unbounded hfile.Cache for benchmarks: a map, with no
// eviction and no allocation on a hit.
type blockMapCache struct {
	mu sync.RWMutex
	m  map[[2]int64]*hfile.Block
}

func newBlockMapCache() *blockMapCache { return &blockMapCache{m: map[[2]int64]*hfile.Block{}} }

func (c *blockMapCache) GetBlock(file uint64, off int64) *hfile.Block {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.m[[2]int64{int64(file), off}]
}

func (c *blockMapCache) CacheBlock(file uint64, off int64, b *hfile.Block, _ bool) {
	c.mu.Lock()
	c.m[[2]int64{int64(file), off}] = b
	c.mu.Unlock()
}

// peStyleFile returns an HFile of rows PE-style rows, the row key of row i
// being i as 26 zero-padded digits, with 90-byte values.
func peStyleFile(tb testing.TB, rows int, enc encoding.DataBlockEncoding, comp hfile.Compression) []byte {
	rng := rand.New(rand.NewPCG(7, 7))
	var buf bytes.Buffer
	w, err := hfile.NewWriter(&buf, hfile.WriterOptions{Encoding: enc, Compression: comp})
	require.NoError(tb, err)
	value := make([]byte, 90)
	for i := 0; i < rows; i++ {
		for j := 0; j < len(value); j += 8 {
			c := byte('A' + rng.IntN(26))
			for k := j; k < min(j+8, len(value)); k++ {
				value[k] = c
			}
		}
		kv := &encoding.KeyValue{
			Row: []byte(fmt.Sprintf("%026d", i)), Family: []byte("info0"), Qualifier: []byte("0"),
			Timestamp: 1700000000000, Type: encoding.TypePut, SeqNum: encoding.SeqNum(i + 1), Value: value,
		}
		require.NoError(tb, w.Append(kv))
	}
	require.NoError(tb, w.Close())
	return buf.Bytes()
}

// benchFiles caches the built files: building 100k GZ rows takes a while.
var benchFiles sync.Map // "enc/rows" -> []byte

// openCached opens a PE-style GZ file of rows rows with enc over a fresh
// block cache and warms the cache with a forward pass.
func openCached(tb testing.TB, rows int, enc encoding.DataBlockEncoding) *hfile.Reader {
	key := fmt.Sprintf("%s/%d", enc, rows)
	data, ok := benchFiles.Load(key)
	if !ok {
		data, _ = benchFiles.LoadOrStore(key, peStyleFile(tb, rows, enc, hfile.CompressionGZ))
	}
	b := data.([]byte)
	r, err := hfile.Open(bytes.NewReader(b), int64(len(b)), "bench-"+key, hfile.ReaderOptions{Cache: newBlockMapCache(), FileID: 1})
	require.NoError(tb, err)
	it := r.NewIterator(true)
	n := 0
	for ok, err := it.First(); ok; ok, err = it.Next() {
		require.NoError(tb, err)
		n++
	}
	require.Equal(tb, rows, n)
	return r
}

// reverseWalker steps a StoreFileScanner back one row at a time, as a
// reversed KeyValueHeap drives it: Next within the row, and when that
// leaves the row, SeekToPreviousRow from the row's first key. At the first
// row it starts again from the last.
type reverseWalker struct {
	s      *StoreFileScanner
	rowBuf []byte
	keyBuf []byte
}

func (w *reverseWalker) start() error { return w.s.SeekToLastRow() }

// step moves past the current row and returns whether it wrapped around.
func (w *reverseWalker) step() (wrapped bool, err error) {
	kv := w.s.Peek()
	w.rowBuf = append(w.rowBuf[:0], kv.Row...)
	for {
		if err := w.s.Next(); err != nil {
			return false, err
		}
		kv = w.s.Peek()
		if kv == nil || !bytes.Equal(kv.Row, w.rowBuf) {
			break
		}
	}
	w.keyBuf = encoding.FirstOnRow(w.keyBuf[:0], w.rowBuf)
	if err := w.s.SeekToPreviousRow(w.keyBuf); err != nil {
		return false, err
	}
	if w.s.Peek() == nil {
		return true, w.start()
	}
	return false, nil
}

// forwardWalker steps a StoreFileScanner forward one row at a time; at the
// end it seeks back to the first row.
type forwardWalker struct {
	s     *StoreFileScanner
	first encoding.Key
}

func (w *forwardWalker) start() error { return w.s.Seek(w.first) }

func (w *forwardWalker) step() (wrapped bool, err error) {
	if err := w.s.Next(); err != nil {
		return false, err
	}
	if w.s.Peek() == nil {
		return true, w.start()
	}
	return false, nil
}

type walker interface {
	start() error
	step() (bool, error)
}

var benchEncodings = []encoding.DataBlockEncoding{encoding.EncodingNone, encoding.EncodingPrefix, encoding.EncodingFastDiff}

const benchRows = 100_000

// BenchmarkStoreFileScannerReverse: one op is one row stepped back, so
// ns/op is ns per row and allocs/op allocations per row.
func BenchmarkStoreFileScannerReverse(b *testing.B) {
	benchWalk(b, func(s *StoreFileScanner, _ *hfile.Reader) walker { return &reverseWalker{s: s} })
}

// BenchmarkStoreFileScannerForward is the same file read forwards (Seek
// once, then Next), for comparison.
func BenchmarkStoreFileScannerForward(b *testing.B) {
	benchWalk(b, func(s *StoreFileScanner, r *hfile.Reader) walker {
		return &forwardWalker{s: s, first: encoding.FirstOnRow(nil, r.FirstKey().Row())}
	})
}

func benchWalk(b *testing.B, newWalker func(*StoreFileScanner, *hfile.Reader) walker) {
	for _, enc := range benchEncodings {
		b.Run("enc="+enc.String(), func(b *testing.B) {
			r := openCached(b, benchRows, enc)
			s := NewStoreFileScanner(r, math.MaxUint64, 0, true)
			w := newWalker(s, r)
			require.NoError(b, w.start())
			// One untimed pass grows the scanner's buffers to size.
			for i := 0; i < benchRows; i++ {
				_, err := w.step()
				require.NoError(b, err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				if _, err := w.step(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "rows/s")
		})
	}
}

// TestStoreFileScannerReverseNoAllocs: stepping back a row allocates
// nothing once the blocks are cached, with every encoding, and the walk
// visits every row once per pass in decreasing order.
func TestStoreFileScannerReverseNoAllocs(t *testing.T) {
	const rows = 5000
	for _, enc := range benchEncodings {
		t.Run("enc="+enc.String(), func(t *testing.T) {
			r := openCached(t, rows, enc)
			s := NewStoreFileScanner(r, math.MaxUint64, 0, true)
			w := &reverseWalker{s: s}
			require.NoError(t, w.start())
			for i := rows - 1; i >= 0; i-- {
				require.Equal(t, fmt.Sprintf("%026d", i), string(s.Peek().Row))
				require.Len(t, s.Peek().Value, 90)
				wrapped, err := w.step()
				require.NoError(t, err)
				require.Equal(t, i == 0, wrapped, "row %d", i)
			}
			require.Equal(t, fmt.Sprintf("%026d", rows-1), string(s.Peek().Row))
			if raceEnabled {
				t.Skip("-race allocates")
			}
			var err error
			allocs := testing.AllocsPerRun(2*rows, func() {
				if _, e := w.step(); e != nil && err == nil {
					err = e
				}
			})
			require.NoError(t, err)
			require.Zero(t, allocs, "allocations per reverse row step")

			fw := &forwardWalker{s: s, first: encoding.FirstOnRow(nil, r.FirstKey().Row())}
			require.NoError(t, fw.start())
			allocs = testing.AllocsPerRun(2*rows, func() {
				if _, e := fw.step(); e != nil && err == nil {
					err = e
				}
			})
			require.NoError(t, err)
			require.Zero(t, allocs, "allocations per forward row step")
		})
	}
}
