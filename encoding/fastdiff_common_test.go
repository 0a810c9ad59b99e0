package encoding

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

// fdCell is what a seeker gives for one cell.
type fdCell struct {
	key, value, tags []byte
	seq              SeqNum
	offset           int
	rowRel           uint8 // the cell's cellState.rowRel
}

// decodeAll decodes payload cell by cell with FAST_DIFF in format f, the
// common-case decoder on or off, and returns the cells and whether it
// stopped on an error.
func decodeAll(t testing.TB, f BlockFormat, payload []byte, common bool) ([]fdCell, bool) {
	defer func(v bool) { noFastDiffCommon = v }(noFastDiffCommon)
	noFastDiffCommon = !common
	s := newSeeker(EncodingFastDiff, f, InnerStoreComparer)
	if err := s.Init(payload); err != nil {
		requireCorruption(t, err)
		return nil, true
	}
	var cells []fdCell
	for {
		cells = append(cells, fdCell{bytes.Clone(s.Key()), bytes.Clone(s.Value()), bytes.Clone(s.Tags()), s.SeqNum(), s.Offset(),
			s.cells[s.pos].rowRel})
		ok, err := s.Next()
		if err != nil {
			requireCorruption(t, err)
			return cells, true
		}
		if !ok {
			return cells, false
		}
	}
}

// checkFastDiffCommon requires both decoders to give the same cells and to
// fail at the same cell.
func checkFastDiffCommon(t testing.TB, f BlockFormat, payload []byte) {
	t.Helper()
	want, wantErr := decodeAll(t, f, payload, false)
	got, gotErr := decodeAll(t, f, payload, true)
	if gotErr != wantErr || len(got) != len(want) {
		t.Fatalf("%s: common path decoded %d cells (error %v), general %d (error %v)",
			formatName(f), len(got), gotErr, len(want), wantErr)
	}
	for i := range want {
		g, w := got[i], want[i]
		if !bytes.Equal(g.key, w.key) || !bytes.Equal(g.value, w.value) || !bytes.Equal(g.tags, w.tags) ||
			g.seq != w.seq || g.offset != w.offset {
			t.Fatalf("%s: cell %d: common path %+v, general %+v", formatName(f), i, g, w)
		}
		// Where the common path says how the row relates to the previous
		// cell's, it is right (an encoder that shares less than it could
		// leaves it unknown).
		if i > 0 && g.rowRel != rowUnknown {
			same := bytes.Equal(Key(g.key).Row(), Key(got[i-1].key).Row())
			if same != (g.rowRel == rowSame) {
				t.Fatalf("%s: cell %d: rowRel %d, but the rows are the same: %v", formatName(f), i, g.rowRel, same)
			}
		}
	}
}

// TestFastDiffCommon holds decodeFastDiffCommon against the general
// decoder on encoded blocks of random and harness-shaped cells, whole and
// with bytes flipped and cut, in every format. FuzzFastDiffCommon does the
// same with arbitrary bytes.
func TestFastDiffCommon(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	harness, _ := harnessBlock()
	for _, f := range testFormats {
		blocks := [][]byte{encodeBlock(t, EncodingFastDiff, f, harness)}
		for _, n := range []int{1, 2, 5, 40, 200} {
			blocks = append(blocks, encodeBlock(t, EncodingFastDiff, f, randomCells(rng, n, InnerStoreComparer)))
		}
		// Long values and keys: lengths of two and three bytes.
		long := randomCells(rng, 20, InnerStoreComparer)
		for i := range long {
			long[i].Value = bytes.Repeat([]byte{byte(i)}, 100+rng.IntN(20000))
		}
		blocks = append(blocks, encodeBlock(t, EncodingFastDiff, f, long))
		for _, b := range blocks {
			checkFastDiffCommon(t, f, b)
			for range 200 {
				m := bytes.Clone(b)
				switch rng.IntN(3) {
				case 0:
					m[encodedHeaderSize+rng.IntN(len(m)-encodedHeaderSize)] ^= byte(1 + rng.IntN(255))
				case 1:
					m = m[:encodedHeaderSize+rng.IntN(len(m)-encodedHeaderSize)]
				default:
					m[encodedHeaderSize+rng.IntN(len(m)-encodedHeaderSize)] = byte(rng.Uint32())
				}
				checkFastDiffCommon(t, f, m)
			}
		}
	}
}

// FuzzFastDiffCommon decodes arbitrary FAST_DIFF payloads with and without
// decodeFastDiffCommon: the cells, and the cell an error stops at, must be
// the same.
func FuzzFastDiffCommon(f *testing.F) {
	rng := rand.New(rand.NewPCG(33, 34))
	harness, _ := harnessBlock()
	for fi, format := range testFormats {
		f.Add(uint8(fi), encodeBlock(f, EncodingFastDiff, format, harness[:8])[encodedHeaderSize:])
		f.Add(uint8(fi), encodeBlock(f, EncodingFastDiff, format, randomCells(rng, 6, InnerStoreComparer))[encodedHeaderSize:])
	}
	f.Fuzz(func(t *testing.T, sel uint8, data []byte) {
		format := testFormats[int(sel)%len(testFormats)]
		payload := binary.BigEndian.AppendUint16(make([]byte, 0, 6+len(data)), uint16(EncodingFastDiff))
		payload = binary.BigEndian.AppendUint32(payload, uint32(len(data)))
		checkFastDiffCommon(t, format, append(payload, data...))
	})
}
