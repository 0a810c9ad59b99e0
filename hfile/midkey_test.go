package hfile

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/regionkv/regionkv/encoding"
	"github.com/stretchr/testify/require"
)

// TestMidKey: the mid-key of one-, two- and three-level indexes splits the
// file's cells near the middle, as a region split needs, and an empty
// file has none.
func TestMidKey(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	kvs := peCells(rng, 6000)
	for _, maxIndex := range []int{1 << 20, 4096, 600} {
		t.Run(fmt.Sprintf("maxIndex=%d", maxIndex), func(t *testing.T) {
			r := writeFile(t, kvs, WriterOptions{BlockSize: 1024, IndexBlockMaxSize: maxIndex, Encoding: encoding.EncodingFastDiff})
			mk, err := r.MidKey()
			require.NoError(t, err)
			require.NotNil(t, mk)
			row := mk.Row()
			below := 0
			for _, kv := range kvs {
				if bytes.Compare(kv.Row, row) < 0 {
					below++
				}
			}
			frac := float64(below) / float64(len(kvs))
			require.InDelta(t, 0.5, frac, 0.1, "levels=%d: %d of %d cells sort before the mid-key's row %q",
				r.Trailer().NumDataIndexLevels, below, len(kvs), row)
		})
	}
	empty := writeFile(t, nil, WriterOptions{})
	mk, err := empty.MidKey()
	require.NoError(t, err)
	require.Nil(t, mk)
}
