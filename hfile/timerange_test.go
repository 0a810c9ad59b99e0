package hfile

import (
	"encoding/binary"
	"testing"

	"github.com/regionkv/regionkv/encoding"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"
)

// TestFileInfoTimeRange reads TIMERANGE in both of HBase's layouts and
// refuses anything else; the writer records its cells' range, delete
// markers included, and HBase's own file reads.
func TestFileInfoTimeRange(t *testing.T) {
	writable := binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, 5), 1700000000000)
	pb := []byte(encoding.PBMagic)
	pb = protowire.AppendTag(pb, 1, protowire.VarintType)
	pb = protowire.AppendVarint(pb, 5)
	pb = protowire.AppendTag(pb, 3, protowire.BytesType) // an unknown field is skipped
	pb = protowire.AppendBytes(pb, []byte("x"))
	pb = protowire.AppendTag(pb, 2, protowire.VarintType)
	pb = protowire.AppendVarint(pb, 1700000000000)
	for _, tc := range []struct {
		name     string
		v        []byte
		ok       bool
		min, max int64
	}{
		{"writable", writable, true, 5, 1700000000000},
		{"protobuf", pb, true, 5, 1700000000000},
		{"short", writable[:15], false, 0, 0},
		{"empty range", binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, 9), 8), false, 0, 0},
		{"protobuf without to", pb[:len(pb)-7], false, 0, 0},
		{"protobuf cut", pb[:len(pb)-1], false, 0, 0},
	} {
		minTS, maxTS, ok := FileInfo{FileInfoTimeRange: tc.v}.TimeRange()
		require.Equal(t, tc.ok, ok, tc.name)
		if ok {
			require.Equal(t, [2]int64{tc.min, tc.max}, [2]int64{minTS, maxTS}, tc.name)
		}
	}
	_, _, ok := FileInfo{}.TimeRange()
	require.False(t, ok)

	kvs := []*encoding.KeyValue{
		{Row: []byte("a"), Family: []byte("f"), Qualifier: []byte("q"), Timestamp: 300, Type: encoding.TypePut, Value: []byte("v")},
		{Row: []byte("b"), Family: []byte("f"), Timestamp: 900, Type: encoding.TypeDeleteFamily},
		{Row: []byte("c"), Family: []byte("f"), Qualifier: []byte("q"), Timestamp: 7, Type: encoding.TypePut, Value: []byte("v")},
	}
	r := writeFile(t, kvs, WriterOptions{})
	maxTS, ok := r.MaxTimestamp()
	require.True(t, ok)
	require.EqualValues(t, 900, maxTS)

	fixture := readCodecFixture(t, codecFixtureName)
	hr := openBytes(t, fixture, nil)
	minTS, maxTS, ok := hr.FileInfo().TimeRange()
	require.True(t, ok, "HBase's TIMERANGE")
	require.LessOrEqual(t, minTS, maxTS)
	m, ok := hr.MaxTimestamp()
	require.True(t, ok)
	require.Equal(t, maxTS, m)
}
