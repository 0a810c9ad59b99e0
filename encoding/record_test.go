package encoding

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRecordRestartIndex: an index recorded while Next steps through a block
// is the one BuildRestartIndex builds, whatever steps back and seeks came in
// between, or none if a seek skipped one of its samples; ROW_INDEX_V1 blocks,
// which carry their own, record none.
func TestRecordRestartIndex(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 5))
	for _, enc := range testEncodings {
		for _, f := range testFormats {
			t.Run(fmt.Sprintf("encoding=%s/%s", enc, formatName(f)), func(t *testing.T) {
				recorded, abandoned := 0, 0
				for trial := 0; trial < 40; trial++ {
					cmp := testComparers[trial%len(testComparers)]
					cells := randomCells(rng, 1+rng.IntN(200), cmp)
					payload := encodeBlock(t, enc, f, cells)
					ref, err := NewSeeker(enc, f, cmp)
					require.NoError(t, err)
					require.NoError(t, ref.Init(payload))
					want, err := ref.BuildRestartIndex()
					require.NoError(t, err)
					candidates := seekKeys(cells)

					s, err := NewSeeker(enc, f, cmp)
					require.NoError(t, err)
					require.NoError(t, s.Init(payload))
					s.RecordRestartIndex()
					// Steps, with now and then a step back (a seek before the
					// current key) or a seek anywhere, until the end.
					moves := rng.IntN(3) // 0: Next only
					for {
						if moves > 0 && rng.IntN(8) == 0 {
							key := candidates[rng.IntN(len(candidates))]
							if moves == 1 {
								key = s.Key() // a seek to where it is
							}
							_, err := s.SeekToKeyInBlock(key, rng.IntN(2) == 0)
							require.NoError(t, err)
						}
						ok, err := s.Next()
						require.NoError(t, err)
						if !ok {
							break
						}
					}
					got := s.TakeRestartIndex()
					require.Nil(t, s.TakeRestartIndex(), "taken once")
					switch {
					case enc == EncodingRowIndexV1:
						require.Nil(t, got)
					case got == nil:
						require.NotZero(t, moves, "Next alone records the index")
						abandoned++
					default:
						require.Equal(t, want, got)
						recorded++
						// And seeks with it find what they find without.
						ix, err := NewSeeker(enc, f, cmp)
						require.NoError(t, err)
						require.NoError(t, ix.InitIndexed(payload, got))
						for range 20 {
							key := candidates[rng.IntN(len(candidates))]
							r1, err1 := ix.SeekToKeyInBlock(key, false)
							r2, err2 := ref.SeekToKeyInBlock(key, false)
							require.NoError(t, err1)
							require.NoError(t, err2)
							require.Equal(t, r2, r1)
							require.Equal(t, current(ref), current(ix))
						}
					}
				}
				if enc != EncodingRowIndexV1 {
					require.NotZero(t, recorded)
				}
				t.Logf("%d recorded, %d abandoned", recorded, abandoned)
			})
		}
	}
}
