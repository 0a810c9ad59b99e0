package encoding

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzSeeker feeds arbitrary payloads to the seekers of every encoding and
// format. The encoding and format come from sel; the 2-byte encoding id is
// supplied by the target (unless sel's high bit is set) so the fuzzer spends
// its time on cells, not on guessing the id. Run with
//
//	go test -run '^$' -fuzz FuzzSeeker ./encoding/
func FuzzSeeker(f *testing.F) {
	rng := rand.New(rand.NewPCG(11, 11))
	for ei, enc := range testEncodings {
		for fi, format := range testFormats {
			sel := uint8(ei*len(testFormats) + fi)
			for _, n := range []int{1, 3, 8} {
				payload := encodeBlock(f, enc, format, randomCells(rng, n, InnerStoreComparer))
				if enc != EncodingNone {
					payload = payload[2:]
				}
				f.Add(sel, payload)
			}
		}
	}
	f.Fuzz(func(t *testing.T, sel uint8, data []byte) {
		combos := len(testEncodings) * len(testFormats)
		i := int(sel&0x7f) % combos
		enc, format := testEncodings[i/len(testFormats)], testFormats[i%len(testFormats)]
		payload := data
		if enc != EncodingNone && sel&0x80 == 0 {
			payload = binary.BigEndian.AppendUint16(make([]byte, 0, 2+len(data)), uint16(enc))
			payload = append(payload, data...)
		}
		s, err := NewSeeker(enc, format, InnerStoreComparer)
		require.NoError(t, err)
		exerciseSeeker(t, s, payload)
	})
}

// FuzzCellBlock feeds arbitrary bytes to the cell block decoder. Run with
//
//	go test -run '^$' -fuzz FuzzCellBlock ./encoding/
func FuzzCellBlock(f *testing.F) {
	rng := rand.New(rand.NewPCG(12, 12))
	for _, withTags := range []bool{false, true} {
		for _, n := range []int{1, 4} {
			cells := randomCells(rng, n, DefaultComparer)
			var b []byte
			for i := range cells {
				b = AppendCellBlock(b, &cells[i], withTags)
			}
			f.Add(withTags, b)
		}
	}
	f.Fuzz(func(t *testing.T, withTags bool, b []byte) {
		checkCellBlock(t, b, withTags)
	})
}
