package encoding

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCopyFilledTo: the copy of a cell a key filled equals CopyTo's, owns
// none of the source's memory, takes FilledCopySize bytes, and keeps the
// slices capped so that appending to one cannot overwrite the next.
func TestCopyFilledTo(t *testing.T) {
	cases := []KeyValue{
		{Row: []byte("row-1"), Family: []byte("cf"), Qualifier: []byte("q"), Timestamp: 42, Type: TypePut, SeqNum: 7, Value: []byte("value")},
		{Row: []byte("r"), Family: []byte{}, Qualifier: []byte{}, Timestamp: -1, Type: TypeDeleteFamily, Value: []byte{}},
		{Row: []byte("r"), Family: []byte("f"), Qualifier: []byte("qq"), Timestamp: 1, Type: TypePut,
			Value: []byte("v"), Tags: AppendTag(nil, TagTypeTTL, []byte{0, 0, 0, 0, 0, 0, 0, 9})},
	}
	for _, want := range cases {
		key := want.Key()
		var src KeyValue
		value := append([]byte{}, want.Value...)
		key.Fill(&src, value)
		src.SeqNum, src.Tags = want.SeqNum, want.Tags
		var plain KeyValue
		src.CopyTo(&plain, nil)
		buf := make([]byte, 3, 64)
		var got KeyValue
		buf = src.CopyFilledTo(&got, key, buf)
		require.Equal(t, 3+FilledCopySize(&src), len(buf))
		require.Equal(t, plain, got)
		for i := range key {
			key[i] = 0xff // the copy does not alias the key
		}
		for i := range value {
			value[i] = 'x'
		}
		require.Equal(t, want.Row, got.Row)
		require.Equal(t, want.Qualifier, got.Qualifier)
		require.Equal(t, want.Value, got.Value)
		for _, s := range [][]byte{got.Row, got.Family, got.Qualifier, got.Value} {
			require.Equal(t, len(s), cap(s))
		}
	}
}
