package scanner

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/hfile"
	"github.com/stretchr/testify/require"
)

// TestStoreFileScannerReverseModel walks random files of small blocks
// backwards a row at a time, as a reversed heap drives a StoreFileScanner
// (Next until the row changes, then SeekToPreviousRow), and checks every
// stop against a model: the first visible cell of the last row before, among
// rows that have one. Rows have one to four cells and may span blocks; some
// cells are above the read point, so some rows have nothing visible; with
// and without a block cache (the iterator then steps between a block and
// the one before it with both decoded).
func TestStoreFileScannerReverseModel(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 28043))
	trials := 12
	if raceEnabled || testing.Short() {
		trials = 4
	}
	for _, enc := range []encoding.DataBlockEncoding{encoding.EncodingNone, encoding.EncodingPrefix,
		encoding.EncodingFastDiff, encoding.EncodingRowIndexV1} {
		for _, cached := range []bool{false, true} {
			t.Run(fmt.Sprintf("enc=%s/cached=%t", enc, cached), func(t *testing.T) {
				for trial := 0; trial < trials; trial++ {
					runReverseModel(t, rng, enc, cached)
				}
			})
		}
	}
}

func runReverseModel(t *testing.T, rng *rand.Rand, enc encoding.DataBlockEncoding, cached bool) {
	const readPoint = 100
	var buf bytes.Buffer
	w, err := hfile.NewWriter(&buf, hfile.WriterOptions{Encoding: enc, BlockSize: 64 + rng.IntN(512)})
	require.NoError(t, err)
	var cells []*encoding.KeyValue
	nrows := 1 + rng.IntN(300)
	invisibleOdds := 1 + rng.IntN(6)
	for i := 0; i < nrows; i++ {
		row := []byte(fmt.Sprintf("row%05d", i*7))
		for q := 0; q < 1+rng.IntN(4); q++ {
			seq := encoding.SeqNum(1 + rng.IntN(readPoint))
			if rng.IntN(invisibleOdds) == 0 {
				seq = readPoint + 1 + encoding.SeqNum(rng.IntN(10))
			}
			kv := &encoding.KeyValue{Row: row, Family: []byte("f"), Qualifier: []byte{byte('a' + q)},
				Timestamp: 5, Type: encoding.TypePut, SeqNum: seq, Value: bytes.Repeat([]byte{'v'}, rng.IntN(40))}
			require.NoError(t, w.Append(kv))
			cells = append(cells, kv)
		}
	}
	require.NoError(t, w.Close())
	opts := hfile.ReaderOptions{FileID: 1}
	if cached {
		opts.Cache = newBlockMapCache()
	}
	r, err := hfile.Open(bytes.NewReader(buf.Bytes()), int64(buf.Len()), "reverse-model", opts)
	require.NoError(t, err)

	// The model: for each row with a visible cell, that cell, newest row last.
	var want []*encoding.KeyValue
	for _, kv := range cells {
		if kv.SeqNum > readPoint {
			continue
		}
		if len(want) > 0 && bytes.Equal(want[len(want)-1].Row, kv.Row) {
			continue
		}
		want = append(want, kv)
	}

	s := NewStoreFileScanner(r, readPoint, 0, cached)
	defer s.Close()
	require.NoError(t, s.SeekToLastRow())
	got := []string{}
	var rowBuf, keyBuf []byte
	for kv := s.Peek(); kv != nil; kv = s.Peek() {
		got = append(got, kv.String())
		rowBuf = append(rowBuf[:0], kv.Row...)
		// Leave the row forward, as the heap does to see that it ended.
		for kv != nil && bytes.Equal(kv.Row, rowBuf) {
			require.NoError(t, s.Next())
			kv = s.Peek()
		}
		keyBuf = encoding.FirstOnRow(keyBuf[:0], rowBuf)
		require.NoError(t, s.SeekToPreviousRow(keyBuf))
	}
	wantStr := make([]string, len(want))
	for i := range want {
		wantStr[len(want)-1-i] = want[i].String()
	}
	require.Equal(t, wantStr, got)
}
