package encoding

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestTags(t *testing.T) {
	tags := AppendTag(nil, 3, []byte("abc"))
	tags = AppendTag(tags, TagTypeTTL, binary.BigEndian.AppendUint64(nil, 5000))
	require.Equal(t, []byte{0, 4, 3, 'a', 'b', 'c', 0, 9, 8, 0, 0, 0, 0, 0, 0, 0x13, 0x88}, tags)
	v, ok := FindTag(tags, 3)
	require.True(t, ok)
	require.Equal(t, "abc", string(v))
	ttl, ok := CellTTL(tags)
	require.True(t, ok)
	require.EqualValues(t, 5000, ttl)
	_, ok = FindTag(tags, 99)
	require.False(t, ok)
	_, ok = FindTag([]byte{0, 200, 8}, 8) // length past the end
	require.False(t, ok)

	kv := &KeyValue{Timestamp: 1000, Tags: tags}
	require.False(t, kv.Expired(math.MinInt64, 5999))
	require.True(t, kv.Expired(math.MinInt64, 6000))
	require.True(t, kv.Expired(1001, 0), "family TTL")
}
