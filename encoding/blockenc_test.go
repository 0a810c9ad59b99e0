package encoding

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

var (
	testEncodings = []DataBlockEncoding{EncodingNone, EncodingPrefix, EncodingFastDiff, EncodingRowIndexV1}
	testFormats   = []BlockFormat{{}, {IncludesMvcc: true}, {IncludesTags: true}, {IncludesMvcc: true, IncludesTags: true}}
	testComparers = []*Comparer{InnerStoreComparer, DefaultComparer, MetaComparer}
)

func formatName(f BlockFormat) string {
	return fmt.Sprintf("mvcc=%t,tags=%t", f.IncludesMvcc, f.IncludesTags)
}

// randomCells returns about n random cells of one random family, sorted by
// cmp. The generator aims at the encoders' corner cases: empty rows and
// qualifiers, rows whose length crosses 256 (so the two row-length bytes
// share 0 or 1 bytes), long shared row prefixes, timestamps differing in a
// single byte, repeated values, and keys repeated with another seq num.
func randomCells(rng *rand.Rand, n int, cmp *Comparer) []KeyValue {
	rows := make([][]byte, 1+n/3)
	for i := range rows {
		switch rng.IntN(10) {
		case 0:
			rows[i] = []byte{}
		case 1:
			r := bytes.Repeat([]byte{'r'}, 250+rng.IntN(10))
			rows[i] = append(r, randomBytes(rng, "ab\xff", rng.IntN(3))...)
		default:
			rows[i] = randomBytes(rng, "ab,\x00\xff", 1+rng.IntN(6))
		}
	}
	quals := make([][]byte, 1+rng.IntN(5))
	for i := range quals {
		quals[i] = randomBytes(rng, "xyz\x00", rng.IntN(5))
	}
	family := [][]byte{{}, []byte("f"), []byte("cf"), []byte("info")}[rng.IntN(4)]
	timestamps := []int64{0, 1, 255, 256, 1700000000000, 1700000000001, 1700000065536, 1 << 40, math.MaxInt64, -5}
	types := []Type{TypePut, TypePut, TypeDelete, TypeDeleteColumn, TypeDeleteFamily, TypeDeleteFamilyVersion}
	values := [][]byte{{}, []byte("v"), []byte("vv"), []byte("value"), randomBytes(rng, "abc", 40)}
	seqs := []SeqNum{0, 1, 127, 128, SeqNum(rng.Uint64N(1 << 40)), math.MaxInt64}
	cells := make([]KeyValue, 0, n+n/4)
	for len(cells) < n {
		kv := KeyValue{
			Row:       rows[rng.IntN(len(rows))],
			Family:    family,
			Qualifier: quals[rng.IntN(len(quals))],
			Timestamp: timestamps[rng.IntN(len(timestamps))],
			Type:      types[rng.IntN(len(types))],
			SeqNum:    seqs[rng.IntN(len(seqs))],
			Value:     values[rng.IntN(len(values))],
		}
		if rng.IntN(4) == 0 {
			kv.Value = randomBytes(rng, "abc", rng.IntN(30))
		}
		if rng.IntN(3) == 0 {
			kv.Tags = randomBytes(rng, "\x00\x01\x07t", rng.IntN(20))
		}
		cells = append(cells, kv)
		if rng.IntN(6) == 0 {
			dup := kv
			dup.SeqNum = seqs[rng.IntN(len(seqs))]
			if rng.IntN(2) == 0 {
				dup.Value = values[rng.IntN(len(values))]
			}
			cells = append(cells, dup)
		}
	}
	slices.SortStableFunc(cells, func(a, b KeyValue) int { return cmp.CompareKeyValues(&a, &b) })
	return cells
}

func randomBytes(rng *rand.Rand, alphabet string, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[rng.IntN(len(alphabet))]
	}
	return b
}

// peCells returns cells shaped like HBase's PerformanceEvaluation: rows
// "%026d", family "info", qualifiers "0".."<cols-1>", random values of
// valueSize bytes, one timestamp, increasing seq nums.
func peCells(rng *rand.Rand, rows, cols, valueSize int) []KeyValue {
	cells := make([]KeyValue, 0, rows*cols)
	for r := 0; r < rows; r++ {
		row := []byte(fmt.Sprintf("%026d", r))
		for c := 0; c < cols; c++ {
			v := make([]byte, valueSize)
			for i := range v {
				v[i] = byte(rng.Uint32())
			}
			cells = append(cells, KeyValue{
				Row: row, Family: []byte("info"), Qualifier: []byte(fmt.Sprint(c)),
				Timestamp: 1700000000000, Type: TypePut, SeqNum: SeqNum(1000 + len(cells)), Value: v,
			})
		}
	}
	return cells
}

// encodeBlock encodes cells and checks the encoder's bookkeeping against an
// independent NONE encoding.
func encodeBlock(t testing.TB, enc DataBlockEncoding, f BlockFormat, cells []KeyValue) []byte {
	t.Helper()
	e, err := NewBlockEncoder(enc, f)
	require.NoError(t, err)
	require.Equal(t, enc, e.Encoding())
	none, err := NewBlockEncoder(EncodingNone, f)
	require.NoError(t, err)
	for i := range cells {
		e.Add(&cells[i])
		none.Add(&cells[i])
	}
	require.Equal(t, len(cells), e.Count())
	out := slices.Clone(e.Finish())
	require.Equal(t, len(out), e.EncodedSize())
	unencoded := len(none.Finish())
	require.Equal(t, unencoded, e.UnencodedSize())
	switch enc {
	case EncodingNone:
	case EncodingRowIndexV1:
		// No unencoded size; the cells are NONE's, then the row index.
		require.Equal(t, uint16(enc), uint16(out[0])<<8|uint16(out[1]), "encoding id")
		require.Equal(t, none.Finish(), out[2:2+unencoded], "cells in NONE format")
		rows := 0
		for i := range cells {
			if i == 0 || !bytes.Equal(cells[i].Row, cells[i-1].Row) {
				rows++
			}
		}
		require.Equal(t, uint32(rows), binary.BigEndian.Uint32(out[2+unencoded:]), "row count")
		require.Len(t, out, 2+unencoded+4+4*rows+4)
		require.Equal(t, uint32(unencoded), binary.BigEndian.Uint32(out[len(out)-4:]), "cells size")
	default:
		require.Equal(t, uint16(enc), uint16(out[0])<<8|uint16(out[1]), "encoding id")
		require.Equal(t, uint32(unencoded), uint32(out[2])<<24|uint32(out[3])<<16|uint32(out[4])<<8|uint32(out[5]), "unencoded size")
	}
	return out
}

// decodedCell is what a seeker shows of one cell.
type decodedCell struct {
	Key    Key
	Value  []byte
	Tags   []byte
	SeqNum SeqNum
	Offset int
}

func expectedCells(cells []KeyValue, f BlockFormat) []decodedCell {
	out := make([]decodedCell, len(cells))
	for i := range cells {
		kv := &cells[i]
		out[i] = decodedCell{Key: kv.Key(), Value: kv.Value}
		if f.IncludesTags && len(kv.Tags) > 0 {
			out[i].Tags = kv.Tags
		}
		if f.IncludesMvcc {
			out[i].SeqNum = kv.SeqNum
		}
	}
	return out
}

// current returns the seeker's cell as Key, Value, Tags and SeqNum give
// it; Cell must give the same (a mismatch panics, failing the test).
func current(s Seeker) decodedCell {
	var kv KeyValue
	s.Cell(&kv)
	if k := s.Key(); k != nil {
		parts := k.KeyValue(s.Value())
		if !bytes.Equal(kv.Row, parts.Row) || !bytes.Equal(kv.Family, parts.Family) || !bytes.Equal(kv.Qualifier, parts.Qualifier) ||
			kv.Timestamp != parts.Timestamp || kv.Type != parts.Type || !bytes.Equal(kv.Value, parts.Value) ||
			!bytes.Equal(kv.Tags, s.Tags()) || kv.SeqNum != s.SeqNum() {
			panic(fmt.Sprintf("Cell %v differs from Key, Value, Tags and SeqNum", &kv))
		}
	}
	return decodedCell{
		Key:    slices.Clone(s.Key()),
		Value:  slices.Clone(s.Value()),
		Tags:   slices.Clone(s.Tags()),
		SeqNum: s.SeqNum(),
		Offset: s.Offset(),
	}
}

// readAll returns every cell of payload, with offsets.
func readAll(t testing.TB, s Seeker, payload []byte) []decodedCell {
	t.Helper()
	require.NoError(t, s.Init(payload))
	var out []decodedCell
	for {
		out = append(out, current(s))
		ok, err := s.Next()
		require.NoError(t, err)
		if !ok {
			break
		}
	}
	// Next at the end leaves the seeker on the last cell.
	require.Equal(t, out[len(out)-1], current(s))
	return out
}

func withoutOffsets(cells []decodedCell) []decodedCell {
	out := slices.Clone(cells)
	for i := range out {
		out[i].Offset = 0
		if len(out[i].Value) == 0 {
			out[i].Value = nil
		}
	}
	return out
}

func TestBlockRoundTrip(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	for _, enc := range testEncodings {
		for _, f := range testFormats {
			t.Run(fmt.Sprintf("encoding=%s/%s", enc, formatName(f)), func(t *testing.T) {
				datasets := [][]KeyValue{peCells(rng, 20, 1, 100), peCells(rng, 5, 10, 10)}
				for i := 0; i < 30; i++ {
					datasets = append(datasets, randomCells(rng, 1+rng.IntN(60), testComparers[i%3]))
				}
				for _, cells := range datasets {
					payload := encodeBlock(t, enc, f, cells)
					s, err := NewSeeker(enc, f, InnerStoreComparer)
					require.NoError(t, err)
					got := readAll(t, s, payload)
					require.Equal(t, withoutOffsets(expectedCells(cells, f)), withoutOffsets(got))
					require.NoError(t, s.Rewind())
					require.Equal(t, got[0], current(s))
				}
			})
		}
	}
}

// TestEncoderReuse checks that Reset fully forgets the previous block: the
// shared-prefix state must not leak into the next block's first cell.
func TestEncoderReuse(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, enc := range testEncodings {
		f := BlockFormat{IncludesMvcc: true, IncludesTags: true}
		e, err := NewBlockEncoder(enc, f)
		require.NoError(t, err)
		for i := 0; i < 5; i++ {
			cells := randomCells(rng, 1+rng.IntN(30), InnerStoreComparer)
			e.Reset()
			for j := range cells {
				e.Add(&cells[j])
			}
			require.Equal(t, encodeBlock(t, enc, f, cells), e.Finish(), "%s block %d", enc, i)
		}
	}
}

// expectSeek is the model of SeekToKeyInBlock: a linear search over the
// sorted keys from position from. It returns the result and the position.
func expectSeek(cmp *Comparer, keys []Key, from int, key Key, before bool) (int, int) {
	i := from
	for i < len(keys) && cmp.CompareKeys(key, keys[i]) > 0 {
		i++
	}
	switch {
	case i == len(keys):
		return SeekBefore, len(keys) - 1
	case !before && cmp.CompareKeys(key, keys[i]) == 0:
		return SeekExact, i
	case i == from:
		return SeekPrecedesBlock, from
	}
	return SeekBefore, i - 1
}

// seekKeys returns keys at, between, before and after the cells' keys.
func seekKeys(cells []KeyValue) []Key {
	keys := []Key{
		FirstOnRow(nil, nil),
		LastOnRow(nil, nil),
		FirstOnRow(nil, bytes.Repeat([]byte{0xff}, 300)),
		LastOnRow(nil, bytes.Repeat([]byte{0xff}, 300)),
	}
	for i := range cells {
		kv := &cells[i]
		row := kv.Row
		keys = append(keys,
			kv.Key(),
			FirstOnRow(nil, row),
			LastOnRow(nil, row),
			FirstOnRowCol(nil, row, kv.Family, kv.Qualifier),
			LastOnRowCol(nil, row, kv.Family, kv.Qualifier),
			AppendKey(nil, row, kv.Family, kv.Qualifier, kv.Timestamp, TypeMaximum),
			AppendKey(nil, row, kv.Family, kv.Qualifier, kv.Timestamp, TypeMinimum),
			FirstOnRow(nil, append(slices.Clone(row), 0)),
			AppendKey(nil, row, kv.Family, append(slices.Clone(kv.Qualifier), 0), kv.Timestamp, kv.Type),
		)
		if kv.Timestamp != math.MaxInt64 {
			keys = append(keys, AppendKey(nil, row, kv.Family, kv.Qualifier, kv.Timestamp+1, kv.Type))
		}
		if kv.Timestamp != math.MinInt64 {
			keys = append(keys, AppendKey(nil, row, kv.Family, kv.Qualifier, kv.Timestamp-1, kv.Type))
		}
		if len(row) > 0 {
			keys = append(keys, LastOnRow(nil, row[:len(row)-1]))
		}
	}
	return keys
}

func checkPosition(t *testing.T, s Seeker, want []decodedCell, pos int, msg string) {
	t.Helper()
	require.Equal(t, want[pos], current(s), "%s: want cell %d", msg, pos)
}

func TestSeekToKeyInBlock(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 2))
	trials := 25
	if raceEnabled || testing.Short() {
		trials = 4
	}
	for _, enc := range testEncodings {
		for _, f := range testFormats {
			t.Run(fmt.Sprintf("encoding=%s/%s", enc, formatName(f)), func(t *testing.T) {
				for trial := 0; trial < trials; trial++ {
					cmp := testComparers[trial%len(testComparers)]
					cells := randomCells(rng, 1+rng.IntN(50), cmp)
					if trial == 0 {
						cells = peCells(rng, 30, 2, 20)
					}
					payload := encodeBlock(t, enc, f, cells)
					s, err := NewSeeker(enc, f, cmp)
					require.NoError(t, err)
					all := readAll(t, s, payload)
					keys := make([]Key, len(all))
					for i := range all {
						keys[i] = all[i].Key
					}
					for _, key := range seekKeys(cells) {
						for _, before := range []bool{false, true} {
							msg := fmt.Sprintf("seek %s before=%t", key, before)
							require.NoError(t, s.Rewind())
							res, err := s.SeekToKeyInBlock(key, before)
							require.NoError(t, err, msg)
							wantRes, pos := expectSeek(cmp, keys, 0, key, before)
							require.Equal(t, wantRes, res, msg)
							checkPosition(t, s, all, pos, msg)
							// The position is usable: Next continues after it.
							ok, err := s.Next()
							require.NoError(t, err)
							if pos+1 < len(all) {
								require.True(t, ok, msg)
								checkPosition(t, s, all, pos+1, msg+", then Next")
							} else {
								require.False(t, ok, msg)
								checkPosition(t, s, all, pos, msg+", then Next at the end")
							}
						}
					}
				}
			})
		}
	}
}

// TestReseek checks seeks that start from the current position rather than
// from the first cell, as HFile's reseekTo does.
func TestReseek(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 3))
	for _, enc := range testEncodings {
		f := BlockFormat{IncludesMvcc: true}
		for trial := 0; trial < 10; trial++ {
			cells := randomCells(rng, 1+rng.IntN(40), InnerStoreComparer)
			payload := encodeBlock(t, enc, f, cells)
			s, err := NewSeeker(enc, f, InnerStoreComparer)
			require.NoError(t, err)
			all := readAll(t, s, payload)
			keys := make([]Key, len(all))
			for i := range all {
				keys[i] = all[i].Key
			}
			candidates := seekKeys(cells)
			for i := 0; i < 200; i++ {
				from := rng.IntN(len(all))
				require.NoError(t, s.Rewind())
				for j := 0; j < from; j++ {
					ok, err := s.Next()
					require.NoError(t, err)
					require.True(t, ok)
				}
				key := candidates[rng.IntN(len(candidates))]
				before := rng.IntN(2) == 0
				msg := fmt.Sprintf("%s: from %d seek %s before=%t", enc, from, key, before)
				res, err := s.SeekToKeyInBlock(key, before)
				require.NoError(t, err, msg)
				wantRes, pos := expectSeek(InnerStoreComparer, keys, from, key, before)
				require.Equal(t, wantRes, res, msg)
				checkPosition(t, s, all, pos, msg)
			}
		}
	}
}

// handCells are the cells of the hand-checked PREFIX and FAST_DIFF blocks.
// Keys (16 or 17 bytes):
//
//	K1 00 02 'r' '1' 01 'f' 'a'     00 00 00 00 00 00 03 e8 04
//	K2 00 02 'r' '1' 01 'f' 'a' 'b' 00 00 00 00 00 00 03 e8 04
//	K3 00 02 'r' '1' 01 'f' 'a' 'b' 00 00 00 00 00 00 03 e7 08
//	K4 00 02 'r' '2' 01 'f' 'a'     00 00 00 00 00 00 03 e7 04
//	K5 00 03 'r' '1' '0' 01 'f' 'a' 00 00 00 00 00 00 03 e7 04
//
// The NONE size is (8+16+2)+(8+17+2)+(8+17+0)+(8+16+3)+(8+17+3) = 133 = 0x85.
func handCells() []KeyValue {
	kv := func(row, qual string, ts int64, typ Type, value string) KeyValue {
		return KeyValue{Row: []byte(row), Family: []byte("f"), Qualifier: []byte(qual), Timestamp: ts, Type: typ, Value: []byte(value)}
	}
	return []KeyValue{
		kv("r1", "a", 1000, TypePut, "v1"),
		kv("r1", "ab", 1000, TypePut, "v1"),
		kv("r1", "ab", 999, TypeDelete, ""),
		kv("r2", "a", 999, TypePut, "xyz"),
		kv("r10", "a", 999, TypePut, "xyz"),
	}
}

func TestPrefixBytes(t *testing.T) {
	want := []byte{
		0x00, 0x02, 0x00, 0x00, 0x00, 0x85, // PREFIX, unencoded size 133
		// K1: suffix 16, value 2, common 0, whole key, "v1".
		0x10, 0x02, 0x00,
		0x00, 0x02, 'r', '1', 0x01, 'f', 'a', 0, 0, 0, 0, 0, 0, 0x03, 0xe8, 0x04,
		'v', '1',
		// K2: rows equal (4) + family (2) + qualifier "a" shared (1) = 7;
		// the qualifiers differ so the comparison stops. Suffix 17-7 = 10.
		0x0a, 0x02, 0x07,
		'b', 0, 0, 0, 0, 0, 0, 0x03, 0xe8, 0x04,
		'v', '1',
		// K3: qualifiers equal (8), then 7 timestamp bytes: 15. Suffix 2.
		0x02, 0x00, 0x0f,
		0xe7, 0x08,
		// K4: same row length, rows share "r": 3. Suffix 13.
		0x0d, 0x03, 0x03,
		'2', 0x01, 'f', 'a', 0, 0, 0, 0, 0, 0, 0x03, 0xe7, 0x04,
		'x', 'y', 'z',
		// K5: row lengths 3 and 2 share their high byte only: 1. Suffix 16.
		0x10, 0x03, 0x01,
		0x03, 'r', '1', '0', 0x01, 'f', 'a', 0, 0, 0, 0, 0, 0, 0x03, 0xe7, 0x04,
		'x', 'y', 'z',
	}
	cells := handCells()
	got := encodeBlock(t, EncodingPrefix, BlockFormat{}, cells)
	require.Equal(t, want, got)
	s, err := NewSeeker(EncodingPrefix, BlockFormat{}, InnerStoreComparer)
	require.NoError(t, err)
	require.Equal(t, withoutOffsets(expectedCells(cells, BlockFormat{})), withoutOffsets(readAll(t, s, want)))
}

func TestFastDiffBytes(t *testing.T) {
	want := []byte{
		0x00, 0x04, 0x00, 0x00, 0x00, 0x85, // FAST_DIFF, unencoded size 133
		// K1: flag 0, key length 16, value length 2, common 0, key, value.
		0x00, 0x10, 0x02, 0x00,
		0x00, 0x02, 'r', '1', 0x01, 'f', 'a', 0, 0, 0, 0, 0, 0, 0x03, 0xe8, 0x04,
		'v', '1',
		// K2: same value (0x40), type (0x20), value length (0x10), 7 ts
		// bytes shared (the cap); key length differs: 17. Common 7 (row,
		// family, "a"); rows equal so the qualifier rest "b"; ts byte e8.
		0x77, 0x11, 0x07, 'b', 0xe8,
		// K3: same key length (0x08), 7 ts bytes; value length 0, common 8
		// (whole qualifier), no qualifier bytes, ts byte e7, type 08.
		0x0f, 0x00, 0x08, 0xe7, 0x08,
		// K4: 7 ts bytes; key length 16, value length 3, common 3 (< 2+2:
		// the row differs), row rest "2", whole qualifier "a", ts e7, type
		// 04, value. The family is not written.
		0x07, 0x10, 0x03, 0x03, '2', 'a', 0xe7, 0x04, 'x', 'y', 'z',
		// K5: same value, type, value length, 7 ts bytes; key length 17;
		// common 1 (row lengths 00 03 vs 00 02); rowLen low byte and row,
		// qualifier, ts e7.
		0x77, 0x11, 0x01, 0x03, 'r', '1', '0', 'a', 0xe7,
	}
	cells := handCells()
	got := encodeBlock(t, EncodingFastDiff, BlockFormat{}, cells)
	require.Equal(t, want, got)
	s, err := NewSeeker(EncodingFastDiff, BlockFormat{}, InnerStoreComparer)
	require.NoError(t, err)
	require.Equal(t, withoutOffsets(expectedCells(cells, BlockFormat{})), withoutOffsets(readAll(t, s, want)))
}

// TestSuffixBytes checks the per-cell suffix: tags length as a compressed int
// (not the 2 bytes of NONE) and mvcc as a Hadoop VLong.
func TestSuffixBytes(t *testing.T) {
	tags := []byte{0x00, 0x02, 0x01, 0x07} // one tag: length 2, type 1, value 7
	cells := []KeyValue{
		{Row: []byte("r"), Family: []byte("f"), Timestamp: 1, Type: TypePut, Value: []byte("v"), Tags: tags, SeqNum: 200},
		{Row: []byte("r"), Family: []byte("f"), Timestamp: 0, Type: TypePut, Value: []byte("v"), SeqNum: 5},
	}
	f := BlockFormat{IncludesMvcc: true, IncludesTags: true}
	key1 := []byte{0x00, 0x01, 'r', 0x01, 'f', 0, 0, 0, 0, 0, 0, 0, 0x01, 0x04}
	key2 := []byte{0x00, 0x01, 'r', 0x01, 'f', 0, 0, 0, 0, 0, 0, 0, 0x00, 0x04}
	// NONE sizes: 8+14+1+(2+4)+2 = 31 and 8+14+1+(2+0)+1 = 26; 57 in all.
	// mvcc 200 is the VLong 8f c8 (length byte -113, then 0xc8).
	none := slices.Concat(
		[]byte{0, 0, 0, 14, 0, 0, 0, 1}, key1, []byte{'v'}, []byte{0x00, 0x04}, tags, []byte{0x8f, 0xc8},
		[]byte{0, 0, 0, 14, 0, 0, 0, 1}, key2, []byte{'v'}, []byte{0x00, 0x00}, []byte{0x05},
	)
	require.Equal(t, none, encodeBlock(t, EncodingNone, f, cells))
	prefix := slices.Concat(
		[]byte{0x00, 0x02, 0, 0, 0, 57},
		[]byte{14, 1, 0}, key1, []byte{'v'}, []byte{0x04}, tags, []byte{0x8f, 0xc8},
		// Common 12: row (3), family (2), empty qualifiers, then 7
		// timestamp bytes. Suffix: the last timestamp byte and the type.
		[]byte{2, 1, 12}, key2[12:], []byte{'v'}, []byte{0x00}, []byte{0x05},
	)
	require.Equal(t, prefix, encodeBlock(t, EncodingPrefix, f, cells))
	fastDiff := slices.Concat(
		[]byte{0x00, 0x04, 0, 0, 0, 57},
		[]byte{0x00, 14, 1, 0}, key1, []byte{'v'}, []byte{0x04}, tags, []byte{0x8f, 0xc8},
		// Every flag and 7 timestamp bytes: 0x7f. Common 5 (row, family;
		// empty qualifiers); no qualifier bytes; timestamp byte 00; no
		// type, no value; tags length 0; mvcc 5.
		[]byte{0x7f, 5, 0x00}, []byte{0x00}, []byte{0x05},
	)
	require.Equal(t, fastDiff, encodeBlock(t, EncodingFastDiff, f, cells))
	for _, c := range []struct {
		enc     DataBlockEncoding
		payload []byte
	}{{EncodingNone, none}, {EncodingPrefix, prefix}, {EncodingFastDiff, fastDiff}} {
		s, err := NewSeeker(c.enc, f, InnerStoreComparer)
		require.NoError(t, err)
		require.Equal(t, withoutOffsets(expectedCells(cells, f)), withoutOffsets(readAll(t, s, c.payload)), "%s", c.enc)
	}
}

func TestUnsupportedEncodings(t *testing.T) {
	for _, enc := range []DataBlockEncoding{EncodingDiff, 1, 99} {
		_, err := NewBlockEncoder(enc, BlockFormat{})
		require.True(t, errors.Is(err, ErrUnsupportedEncoding), "%v", err)
		require.False(t, IsCorruption(err))
		_, err = NewSeeker(enc, BlockFormat{}, InnerStoreComparer)
		require.True(t, errors.Is(err, ErrUnsupportedEncoding), "%v", err)
	}
}

func TestEncoderFamilyChangePanics(t *testing.T) {
	for _, enc := range []DataBlockEncoding{EncodingPrefix, EncodingFastDiff} {
		e, err := NewBlockEncoder(enc, BlockFormat{})
		require.NoError(t, err)
		e.Add(&KeyValue{Row: []byte("a"), Family: []byte("f1"), Type: TypePut})
		require.Panics(t, func() { e.Add(&KeyValue{Row: []byte("b"), Family: []byte("f2"), Type: TypePut}) })
	}
}

func TestSeekerNotInitialized(t *testing.T) {
	s, err := NewSeeker(EncodingPrefix, BlockFormat{}, InnerStoreComparer)
	require.NoError(t, err)
	require.Error(t, s.Rewind())
	_, err = s.Next()
	require.Error(t, err)
	_, err = s.SeekToKeyInBlock(FirstOnRow(nil, nil), false)
	require.Error(t, err)
	require.Nil(t, s.Key())
	require.Nil(t, s.Value())
	// A failed Init leaves the seeker unusable, not on stale data.
	require.True(t, IsCorruption(s.Init([]byte{0, 2, 0, 0, 0, 0})))
	require.Error(t, s.Rewind())
}

// TestSeekerRandomMoves drives a seeker with random Rewind, Next,
// SeekToKeyInBlock and SeekBeforeKey calls against a model of the block,
// with the default key budget and with budgets so small that the seeker
// keeps few cells (or only the current one) and must decode again from the
// start of the block to move back.
func TestSeekerRandomMoves(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 4))
	trials := 20
	if raceEnabled || testing.Short() {
		trials = 4
	}
	for _, enc := range testEncodings {
		for _, f := range testFormats {
			for _, v := range []struct {
				budget  int
				indexed bool
			}{{0, false}, {1, false}, {300, false}, {0, true}, {1, true}, {300, true}} {
				budget := v.budget
				t.Run(fmt.Sprintf("encoding=%s/%s/budget=%d/indexed=%t", enc, formatName(f), budget, v.indexed), func(t *testing.T) {
					for trial := 0; trial < trials; trial++ {
						cmp := testComparers[trial%len(testComparers)]
						cells := randomCells(rng, 1+rng.IntN(80), cmp)
						if trial == 0 {
							cells = peCells(rng, 40, 2, 20)
						}
						if v.indexed && trial%2 == 1 {
							cells = randomCells(rng, 1+rng.IntN(400), cmp)
						}
						payload := encodeBlock(t, enc, f, cells)
						ref, err := NewSeeker(enc, f, cmp)
						require.NoError(t, err)
						all := readAll(t, ref, payload)
						keys := make([]Key, len(all))
						for i := range all {
							keys[i] = all[i].Key
						}
						candidates := seekKeys(cells)
						sk, err := NewSeeker(enc, f, cmp)
						require.NoError(t, err)
						sk.(*seeker).keyBudget = budget
						if v.indexed {
							// A RestartIndex built by another seeker: seeks
							// skip ahead to its samples.
							require.NoError(t, ref.Init(payload))
							idx, err := ref.BuildRestartIndex()
							require.NoError(t, err)
							require.Equal(t, (len(all)+RestartInterval-1)/RestartInterval, idx.Len())
							require.Equal(t, all[0], current(ref), "BuildRestartIndex leaves the seeker on the first cell")
							require.NoError(t, sk.InitIndexed(payload, idx))
						} else {
							require.NoError(t, sk.Init(payload))
						}
						pos := 0
						for i := 0; i < 300; i++ {
							key := candidates[rng.IntN(len(candidates))]
							var msg string
							switch op := rng.IntN(10); {
							case op == 0:
								msg = "rewind"
								require.NoError(t, sk.Rewind())
								pos = 0
							case op < 4:
								msg = "next"
								ok, err := sk.Next()
								require.NoError(t, err)
								require.Equal(t, pos+1 < len(all), ok)
								if ok {
									pos++
								}
							case op < 7:
								before := rng.IntN(2) == 0
								msg = fmt.Sprintf("seek %s before=%t from %d", key, before, pos)
								res, err := sk.SeekToKeyInBlock(key, before)
								require.NoError(t, err, msg)
								var wantRes int
								wantRes, pos = expectSeek(cmp, keys, pos, key, before)
								require.Equal(t, wantRes, res, msg)
							case op == 9:
								row := key.Row()
								msg = fmt.Sprintf("seek before row %q from %d", row, pos)
								res, err := sk.SeekBeforeRow(row)
								require.NoError(t, err, msg)
								// The model: the first cell of the last row <
								// row, searching back from pos, and not the
								// block's first cell.
								want, j := RowFound, pos
								for j >= 0 && cmp.CompareRows(keys[j].Row(), row) >= 0 {
									j--
								}
								if j < 0 {
									want = RowBeforeBlock
								} else {
									r := keys[j].Row()
									for j > 0 && cmp.CompareRows(keys[j-1].Row(), r) == 0 {
										j--
									}
									if j == 0 {
										want = RowAtBlockStart
									}
								}
								// Unknown only where the seeker may not have kept
								// the cells before its position: it dropped them
								// (a small budget, no restart index), or a
								// ROW_INDEX_V1 seek jumped to a row.
								if res == RowUnknown && (budget > 0 && !v.indexed || enc == EncodingRowIndexV1) {
									break
								}
								require.Equal(t, want, res, msg)
								if res == RowFound {
									pos = j
								}
							default:
								msg = fmt.Sprintf("seek before %s from %d", key, pos)
								res, err := sk.SeekBeforeKey(key)
								require.NoError(t, err, msg)
								j := 0
								for j < len(keys) && cmp.CompareKeys(keys[j], key) < 0 {
									j++
								}
								if j == 0 {
									require.Equal(t, SeekPrecedesBlock, res, msg)
									pos = 0
								} else {
									require.Equal(t, SeekBefore, res, msg)
									pos = j - 1
								}
							}
							checkPosition(t, sk, all, pos, msg)
							require.Equal(t, keys[0], sk.FirstKey(), msg)
						}
					}
				})
			}
		}
	}
}
